#!/bin/sh
# A compiler and linker launcher (worker/CMakeLists.txt): runs a C compile or link command of
# CMake's with musl-gcc in place of the C compiler. Usage: musl-cc.sh MUSL_GCC C_COMPILER ARGS...
musl_gcc="$1"
shift 2
exec "$musl_gcc" "$@"
