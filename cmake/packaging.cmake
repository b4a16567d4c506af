# Installing wattcut and its Debian package (docs/install.md): install() rules for the CLI, the
# Python module with its frequency-setter helper, the systemd units and their configs, the manual
# pages and bash completion generated from the CLI's --help, and CPack's DEB generator.
#
#   cmake --build BUILD && (cd BUILD && cpack -G DEB)   ->  BUILD/wattcut_<version>_<arch>.deb
#   make deb                                            ->  the same for build/, path printed
#
# The paths are Debian 12's: the package is installed with prefix /usr; /etc/wattcut and
# /lib/systemd/system are absolute destinations (CPack's DEB generator puts them in the package).
include_guard(GLOBAL)

# Debian's python3 reads /usr/lib/python3/dist-packages (any 3.x); pip installs elsewhere.
set(WATTCUT_INSTALL_PYTHONDIR "lib/python3/dist-packages"
    CACHE STRING "Where the Python package wattcut is installed, relative to the prefix")
set(WATTCUT_INSTALL_SYSTEMDDIR "/lib/systemd/system" CACHE PATH "Where the systemd units are installed")
set(WATTCUT_INSTALL_CONFDIR "/etc/wattcut" CACHE PATH "Where the units' configs are installed")

set(WATTCUT_DEBIAN_DIR ${PROJECT_SOURCE_DIR}/deploy/debian)
set(WATTCUT_PACKAGING_DIR ${PROJECT_BINARY_DIR}/packaging)

# ---- manual pages and bash completion, from the built CLI's --help ----------------------------
if(NOT DEFINED Python_EXECUTABLE)
  set(Python_EXECUTABLE /usr/bin/python3)
endif()
add_custom_command(
  OUTPUT ${WATTCUT_PACKAGING_DIR}/cli_docs.stamp
  COMMAND ${Python_EXECUTABLE} ${WATTCUT_DEBIAN_DIR}/cli_docs.py --wattcut $<TARGET_FILE:wattcut>
          --version ${PROJECT_VERSION} --man-dir ${WATTCUT_PACKAGING_DIR}/man
          --completion ${WATTCUT_PACKAGING_DIR}/wattcut.bash-completion
          --stamp ${WATTCUT_PACKAGING_DIR}/cli_docs.stamp
  DEPENDS wattcut ${WATTCUT_DEBIAN_DIR}/cli_docs.py
  COMMENT "Manual pages and bash completion from wattcut --help"
  VERBATIM)
add_custom_target(wattcut_cli_docs ALL DEPENDS ${WATTCUT_PACKAGING_DIR}/cli_docs.stamp)

# The Debian changelog and copyright as Debian wants them: a native package (no Debian revision),
# so changelog.gz, compressed with gzip -9n (no name, no time stamp).
add_custom_command(
  OUTPUT ${WATTCUT_PACKAGING_DIR}/changelog.gz
  COMMAND ${Python_EXECUTABLE} -c
          "import gzip,sys; open(sys.argv[2],'wb').write(gzip.compress(open(sys.argv[1],'rb').read(),9,mtime=0))"
          ${WATTCUT_DEBIAN_DIR}/changelog ${WATTCUT_PACKAGING_DIR}/changelog.gz
  DEPENDS ${WATTCUT_DEBIAN_DIR}/changelog
  VERBATIM)
add_custom_target(wattcut_debian_changelog ALL DEPENDS ${WATTCUT_PACKAGING_DIR}/changelog.gz)

# Everything the package holds, so `make deb` builds only these (not the tests and benchmarks).
add_custom_target(wattcut_package_files DEPENDS wattcut wattcut-freq-setter wattcut_python wattcut_cli_docs
                                                wattcut_debian_changelog)
if(TARGET wattcut_spank)
  add_dependencies(wattcut_package_files wattcut_spank)
endif()

# ---- install() rules -------------------------------------------------------------------------
install(TARGETS wattcut RUNTIME DESTINATION bin)
# The Slurm SPANK plugin (docs/slurm.md): one plugstack.conf line names it by this path.
if(TARGET wattcut_spank)
  install(TARGETS wattcut_spank LIBRARY DESTINATION lib/wattcut)
endif()

# The Python package, as python/CMakeLists.txt assembles it in BUILD/python/wattcut: the compiled
# module and the helper as targets (so the package's copies are stripped), the pure files (and a
# generated _version.py, once there) from the assembled folder. __pycache__ of test runs stays out.
install(TARGETS _wattcut LIBRARY DESTINATION ${WATTCUT_INSTALL_PYTHONDIR}/wattcut)
# The helper sits beside the module: pipeline_frequency.py looks for it there.
install(TARGETS wattcut-freq-setter RUNTIME DESTINATION ${WATTCUT_INSTALL_PYTHONDIR}/wattcut)
install(DIRECTORY ${PROJECT_BINARY_DIR}/python/wattcut/ DESTINATION ${WATTCUT_INSTALL_PYTHONDIR}/wattcut
        FILES_MATCHING PATTERN "*.py" PATTERN "*.pyi" PATTERN "py.typed" PATTERN "__pycache__" EXCLUDE)

install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/wattcut-server.service
              ${PROJECT_SOURCE_DIR}/deploy/systemd/wattcut-agent.service
        DESTINATION ${WATTCUT_INSTALL_SYSTEMDDIR})
set(WATTCUT_CONFFILES server.conf agent.conf)
foreach(conf ${WATTCUT_CONFFILES})
  install(FILES ${PROJECT_SOURCE_DIR}/deploy/etc/wattcut/${conf} DESTINATION ${WATTCUT_INSTALL_CONFDIR})
endforeach()

install(DIRECTORY ${WATTCUT_PACKAGING_DIR}/man/ DESTINATION share/man/man1 FILES_MATCHING PATTERN "*.1.gz")
install(FILES ${WATTCUT_PACKAGING_DIR}/wattcut.bash-completion DESTINATION share/bash-completion/completions
        RENAME wattcut)

install(FILES ${WATTCUT_DEBIAN_DIR}/copyright ${WATTCUT_PACKAGING_DIR}/changelog.gz
              ${PROJECT_SOURCE_DIR}/docs/install.md
        DESTINATION share/doc/wattcut)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/agent.tokens.example ${PROJECT_SOURCE_DIR}/deploy/systemd/wattcut-agent-amd.conf
        DESTINATION share/doc/wattcut/examples)

# ---- CPack: the Debian package ---------------------------------------------------------------
execute_process(COMMAND dpkg --print-architecture OUTPUT_VARIABLE WATTCUT_DEB_ARCH
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT WATTCUT_DEB_ARCH)
  set(WATTCUT_DEB_ARCH amd64)
endif()

# conffiles: every file installed in /etc/wattcut (dpkg keeps an administrator's changes).
set(conffiles "")
foreach(conf ${WATTCUT_CONFFILES})
  string(APPEND conffiles "${WATTCUT_INSTALL_CONFDIR}/${conf}\n")
endforeach()
file(WRITE ${WATTCUT_PACKAGING_DIR}/control/conffiles "${conffiles}")
file(COPY ${WATTCUT_DEBIAN_DIR}/postinst ${WATTCUT_DEBIAN_DIR}/prerm ${WATTCUT_DEBIAN_DIR}/postrm
     DESTINATION ${WATTCUT_PACKAGING_DIR}/control
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
# Copied when CMake configures: an edited script re-runs the configure step at the next build.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${WATTCUT_DEBIAN_DIR}/postinst
                                                              ${WATTCUT_DEBIAN_DIR}/prerm ${WATTCUT_DEBIAN_DIR}/postrm)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME wattcut)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "wattcut maintainers <maintainers@users.noreply.a-seed-c4d8cb24.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU frequency planner cutting the energy of large-model training")
# The long description under the summary line; CPack indents it and writes the empty line as " .".
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "wattcut plans the SM frequency of every computation of a pipeline-parallel
training job (Perseus): it profiles each stage, computes the job's
iteration time-energy frontier and serves each rank its schedule, slowing
the computations off the critical path without slowing the iteration.

This package holds the wattcut command, its planning server
(wattcut-server.service), the node agent that alone opens NVML on a GPU
node (wattcut-agent.service), the row power controller (POLCA), and the
Python module wattcut that training ranks use.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME "wattcut_${PROJECT_VERSION}_${WATTCUT_DEB_ARCH}.deb")
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${WATTCUT_DEB_ARCH})
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The shared libraries' packages from dpkg-shlibdeps; python3 for the module (built for 3.11's
# ABI: _wattcut.cpython-311-x86_64-linux-gnu.so), adduser and init-system-helpers
# (deb-systemd-helper, deb-systemd-invoke) for the maintainer scripts.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.11~), python3 (<< 3.12), adduser, init-system-helpers (>= 1.52)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-torch, python3-numpy")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${WATTCUT_PACKAGING_DIR}/control/conffiles ${WATTCUT_PACKAGING_DIR}/control/postinst
    ${WATTCUT_PACKAGING_DIR}/control/prerm ${WATTCUT_PACKAGING_DIR}/control/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Directories as Debian has them: 0755, root's.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                                WORLD_READ WORLD_EXECUTE)
# cpack (and `cmake --install`) package what is built and build nothing themselves: their default
# (the preinstall target depends on all) would build every test and benchmark first, and the
# package test runs cpack inside ctest. `make deb` builds wattcut_package_files first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CPack)
