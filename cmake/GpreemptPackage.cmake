# The Debian package: `cpack -G DEB` (or scripts/package.sh) in a build directory makes
# gpreempt_<version>_amd64.deb holding every install component (library, headers, CMake and
# pkg-config files, the gpreempt program, the Python package, the simulator) under /usr.
# Library dependencies come from dpkg-shlibdeps (dpkg-dev); python3 is declared for the package.
set(CPACK_PACKAGE_NAME gpreempt)
set(CPACK_PACKAGE_VENDOR "gpreempt")
set(CPACK_PACKAGE_CONTACT "gpreempt maintainers <gpreempt@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Preemptive GPU sharing for AMD Instinct GPUs (KFD queue suspend/resume)")
set(CPACK_PACKAGE_DESCRIPTION
    "Suspends and resumes the KFD compute queues of a running process through the upstream debug-trap ioctls: C library (libgpreempt.so), gpreempt command, Python package and a simulated KFD (kfdsim) for machines without an AMD GPU.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Install with CMAKE_INSTALL_PREFIX=/usr into a DESTDIR, as `make install` for a distribution does:
# the install code that looks at the prefix (the Python directory) then sees /usr.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES OFF)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # gpreempt_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# shlibs + the ldconfig trigger, so that ctypes finds libgpreempt_poc.so by name after install.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# libsimrt.so and libkfdshim.so ship in this package: dpkg-shlibdeps finds them here.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    "${PROJECT_BINARY_DIR}/lib")
if(TARGET gpreempt_python)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "python3 (>= ${GPREEMPT_PYTHON_VERSION}), python3 (<< ${GPREEMPT_PYTHON_VERSION}.99)")
endif()
# Only what an installed tree needs: tests and benchmarks are not installed.
set(CPACK_INSTALL_CMAKE_PROJECTS "${PROJECT_BINARY_DIR};${PROJECT_NAME};ALL;/")
include(CPack)
