# Where an install puts things relative to its prefix, so that `cmake --install <build> --prefix P`
# and the Debian package (prefix /usr) give a tree that works from wherever it lands.
#
# Programs find the project's shared libraries through a relative RPATH ($ORIGIN/<bindir → libdir>):
# no LD_LIBRARY_PATH, whatever the prefix, also with a multiarch libdir (lib/x86_64-linux-gnu when
# the build is configured with CMAKE_INSTALL_PREFIX=/usr). kfdsim and the shim use the same two
# relative paths to find each other (sim/daemon, sim/shim).
file(RELATIVE_PATH GPREEMPT_BIN_TO_LIB ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
file(RELATIVE_PATH GPREEMPT_LIB_TO_BIN ${CMAKE_INSTALL_FULL_LIBDIR} ${CMAKE_INSTALL_FULL_BINDIR})
set(CMAKE_INSTALL_RPATH "$ORIGIN/${GPREEMPT_BIN_TO_LIB}")
