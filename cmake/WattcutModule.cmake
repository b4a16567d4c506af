option(WATTCUT_UNITY_BUILD "Compile each target's sources in batches (unity build; docs/building.md)" ON)
set(WATTCUT_UNITY_BUILD_BATCH_SIZE 8 CACHE STRING "Sources per unity batch")

# wattcut_unity_build(TARGET): TARGET's sources compiled in batches of WATTCUT_UNITY_BUILD_BATCH_SIZE,
# each batch one translation unit, when WATTCUT_UNITY_BUILD is on. A batch parses the heavy headers
# (nlohmann/json, httplib, the standard library) and instantiates their templates once for all its
# sources. GCC's -Wsubobject-linkage takes a source included by its batch for a header: a class of
# the source's namespace with a member of the source's anonymous namespace is fine in one source
# and still fine in its batch, so the warning is off there.
function(wattcut_unity_build target)
  if(WATTCUT_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${WATTCUT_UNITY_BUILD_BATCH_SIZE})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
    endif()
  endif()
endfunction()

# wattcut_module(NAME SOURCES a.cc b.cc DEPS other_lib ...)
#   A static library `wattcut_NAME` with src/ on its include path.
function(wattcut_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(wattcut_${name} STATIC ${ARG_SOURCES})
  wattcut_unity_build(wattcut_${name})
  target_include_directories(wattcut_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(wattcut_${name} PUBLIC ${ARG_DEPS})
endfunction()

# Test executables' own code (the test cases and harnesses, not the libraries they test) is
# compiled with these flags after the build type's: it is more than half of what the build
# compiles and it runs briefly, while the code under test keeps its optimisation. -O0 compiles it
# about a third faster than -O2 (measured on tests/server/server_hardening_test.cc). Set it
# empty to compile tests like the rest.
set(WATTCUT_TEST_COMPILE_OPTIONS "-O0" CACHE STRING "Extra compile options of test executables' own sources")

# The headers nearly every test source parses (GoogleTest, nlohmann/json, the standard library's
# heaviest), precompiled once by wattcut_test_precompiled_headers and reused by every test
# executable: parsing them was about a third of compiling a test source at -O0. Empty: no
# precompiled header (each source parses its own includes, as it always does as well).
set(WATTCUT_TEST_PRECOMPILED_HEADERS
    <algorithm> <chrono> <cmath> <filesystem> <fstream> <functional> <map> <memory> <optional>
    <sstream> <string> <thread> <vector> <gtest/gtest.h> <nlohmann/json.hpp>
    CACHE STRING "Headers precompiled once for every test executable's own sources")

# The target that owns the tests' precompiled header: an executable compiled with the same options
# as the test sources that reuse it, since GCC uses a precompiled header only where they match (and
# CMake's -Winvalid-pch with -Werror fails the build where they do not). Called once, after the
# project-wide compile options are set.
function(wattcut_test_precompiled_headers)
  if(NOT WATTCUT_TEST_PRECOMPILED_HEADERS)
    return()
  endif()
  add_executable(wattcut_test_precompiled_headers ${PROJECT_SOURCE_DIR}/cmake/test_precompiled_headers.cc)
  target_compile_options(wattcut_test_precompiled_headers PRIVATE ${WATTCUT_TEST_COMPILE_OPTIONS})
  target_link_libraries(wattcut_test_precompiled_headers PRIVATE GTest::gtest GTest::gtest_main
                                                                 nlohmann_json::nlohmann_json)
  target_precompile_headers(wattcut_test_precompiled_headers PRIVATE ${WATTCUT_TEST_PRECOMPILED_HEADERS})
endfunction()

function(wattcut_test_compile_options target)
  wattcut_unity_build(${target})
  if(WATTCUT_TEST_COMPILE_OPTIONS)
    target_compile_options(${target} PRIVATE ${WATTCUT_TEST_COMPILE_OPTIONS})
  endif()
  if(TARGET wattcut_test_precompiled_headers)
    target_precompile_headers(${target} REUSE_FROM wattcut_test_precompiled_headers)
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
