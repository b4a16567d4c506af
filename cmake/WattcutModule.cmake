# wattcut_module(NAME SOURCES a.cc b.cc DEPS other_lib ...)
#   A static library `wattcut_NAME` with src/ on its include path.
function(wattcut_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(wattcut_${name} STATIC ${ARG_SOURCES})
  target_include_directories(wattcut_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(wattcut_${name} PUBLIC ${ARG_DEPS})
endfunction()

# Test executables' own code (the test cases and harnesses, not the libraries they test) is
# compiled with these flags after the build type's: it is more than half of what the build
# compiles and it runs briefly, while the code under test keeps its optimisation. -O0 compiles it
# about a third faster than -O2 (measured on tests/server/server_hardening_test.cc). Set it
# empty to compile tests like the rest.
set(WATTCUT_TEST_COMPILE_OPTIONS "-O0" CACHE STRING "Extra compile options of test executables' own sources")
function(wattcut_test_compile_options target)
  if(WATTCUT_TEST_COMPILE_OPTIONS)
    target_compile_options(${target} PRIVATE ${WATTCUT_TEST_COMPILE_OPTIONS})
  endif()
endfunction()

# wattcut_test(NAME SOURCES a_test.cc ... DEPS wattcut_x ...)
#   A GoogleTest executable registered with CTest. Tests see the shared data folder
#   through WATTCUT_SHARED_DIR_DEFAULT (see base/shared_data.h).
function(wattcut_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  wattcut_test_compile_options(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} wattcut_test_support GTest::gtest GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
endfunction()
