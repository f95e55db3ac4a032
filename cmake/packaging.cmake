# `cmake --install` and `cpack -G DEB` (BUILDING.md, "Installing"): the programs to bin/, the
# examples (job files, image map, Python trainers) to share/amt-local/examples/. The web page is
# built into amtd (web/), so nothing of it is installed.
#
# Every helper lands in bin/ beside the programs, because that is where they are found today, with
# no path configured: amtd and `amt run` start amt-worker and amt-script-runner from their own
# folder (/proc/self/exe), amt-worker starts amt-job-shim from its own, amt-script-runner runs
# amt-xgboost-algorithm.py from its own, and the image map's ${AMT_BIN} names that folder
# (amt-toy-trainer). The examples' image-map.json names its Python trainers relative to itself
# (${IMAGE_MAP_DIR}), and `amt run JOB.json` reads the image-map.json beside the job file, so
# `amt run /usr/share/amt-local/examples/random-tuning.json` works from the installed tree as from
# a clone.
include(GNUInstallDirs)

install(TARGETS amtd amt-worker amt amt-job-shim amt-script-runner amt-toy-trainer
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS worker/script_runner/xgboost_algorithm.py
        DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME amt-xgboost-algorithm.py)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/amt-local/examples
        USE_SOURCE_PERMISSIONS
        PATTERN CMakeLists.txt EXCLUDE
        PATTERN screenshots EXCLUDE
        PATTERN __pycache__ EXCLUDE
        PATTERN *.pyc EXCLUDE)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/amt-local)

# The .deb: amt-local_<version>_<arch>.deb in the build folder, installed under /usr. Its Depends
# are the Debian packages of the shared libraries the binaries link (dpkg-shlibdeps, from
# dpkg-dev: libgrpc++1.51, libprotobuf32, libsqlite3-0, libssl3, ...) and python3, which the
# examples' Python trainers, amt-xgboost-algorithm.py and script mode run.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME amt-local)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "amt-local developers <amt-local@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Local emulator of Amazon SageMaker Automatic Model Tuning (amtd, amt-worker, amt)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS python3)
# What the other examples and clients use: real training code (script mode, the built-in XGBoost,
# the PyTorch examples), boto3 and the aws cli against amtd, amtd --executor slurm.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "python3-sklearn, python3-xgboost, python3-torch, python3-boto3, awscli, slurm-wlm")
include(CPack)
