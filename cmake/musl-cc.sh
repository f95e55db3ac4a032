#!/bin/sh
# A compiler and linker launcher (worker/CMakeLists.txt): runs a C compile or link command of
# CMake's with musl-gcc in place of the C compiler. Usage: musl-cc.sh MUSL_GCC C_COMPILER ARGS...
# Sanitizer flags (the sanitizer presets put them in CMAKE_EXE_LINKER_FLAGS) are dropped: musl has
# no sanitizer runtimes, and amt-job-shim is the same static program in every build.
musl_gcc="$1"
shift 2
for arg in "$@"; do
  shift
  case "$arg" in
    -fsanitize=* | -fno-sanitize-recover=*) ;;
    *) set -- "$@" "$arg" ;;
  esac
done
exec "$musl_gcc" "$@"
