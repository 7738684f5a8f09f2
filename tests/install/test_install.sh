#!/bin/sh
# test_install.sh BUILD_DIR SOURCE_DIR -- install into a scratch prefix and
# use it the three ways a user would: pkg-config, find_package(cdnn), and
# the installed CLI finding the installed providers with no environment.
set -eu
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
unset CDNN_PROVIDER_PATH

# The installed CLI finds the installed providers by itself.
"$prefix/bin/cdnn" engines | grep -q "cpu:reference"
"$prefix/bin/cdnn" engines --json | grep -q "\"provider\": \"cpu\""
# ...and not those of the build tree.
"$prefix/bin/cdnn" engines --json | grep -q "$prefix/lib/cdnn/providers/cpu.so"

# pkg-config
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc -std=c11 -Wall -Werror "$src/examples/hello.c" -o "$work/hello_pc" \
    $(pkg-config --cflags --libs cdnn)
"$work/hello_pc" | grep -q "y = \[\[4, 1\], \[0, 0\]\]"

# find_package(cdnn)
mkdir -p "$work/consumer"
cat > "$work/consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(cdnn 0.1 REQUIRED)
add_executable(hello "$src/examples/hello.c")
target_link_libraries(hello PRIVATE cdnn::cdnn)
CMAKE
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer/build" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$work/consumer/build/hello" | grep -q "y = \[\[4, 1\], \[0, 0\]\]"
echo "install: pkg-config, find_package and the CLI all work from $prefix"
