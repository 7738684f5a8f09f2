#!/bin/sh
# test_install.sh BUILD_DIR SOURCE_DIR -- install into a scratch prefix and
# use it the three ways a user would: pkg-config, find_package(cdnn), and
# the installed CLI finding the installed providers with no environment;
# then build the example provider (examples/provider) outside the tree
# against the installed provider SDK, both ways, and use it from the CLI.
set -eu
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
unset CDNN_PROVIDER_PATH CDNN_KERNEL_PATH

# The installed CLI finds the installed providers by itself.
"$prefix/bin/cdnn" engines | grep -q "cpu:reference"
"$prefix/bin/cdnn" engines --json | grep -q "\"provider\": \"cpu\""
# ...and not those of the build tree.
"$prefix/bin/cdnn" engines --json | grep -q "$prefix/lib/cdnn/providers/cpu.so"
# ...and the installed kernel packs, where the build made them.
if [ -e "$build/lib/cdnn/kernels/host.kpack" ]; then
    [ -e "$prefix/lib/cdnn/kernels/host.kpack" ]
    "$prefix/bin/cdnn" engines | grep -q " kernels:matmul_host "
fi

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

# The provider SDK: the example provider built with pkg-config ...
example=$src/examples/provider
mkdir -p "$work/provider_pc"
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
    "$example/copy_provider.c" -o "$work/provider_pc/copy.so" \
    $(pkg-config --cflags --libs cdnn-sdk) -Wl,--no-undefined
# ... and with find_package(cdnn COMPONENTS sdk), from its own CMakeLists.txt.
cmake -S "$example" -B "$work/provider_cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/provider_cmake" >/dev/null

# Each exports its entry point and nothing else (the SDK stays inside it),
# and the installed CLI lists, builds with and runs its engine.
for dir in "$work/provider_pc" "$work/provider_cmake"; do
    exported=$(nm -D --defined-only "$dir/copy.so" | awk '{ print $3 }')
    [ "$exported" = cdnn_provider_entry ] || {
        echo "$dir/copy.so exports more than cdnn_provider_entry:" $exported >&2
        exit 1
    }
    export CDNN_PROVIDER_PATH="$dir:$prefix/lib/cdnn/providers"
    "$prefix/bin/cdnn" engines | grep -q "example:copy  *example  *1.0.0"
    "$prefix/bin/cdnn" build "$example/identity.json" -o "$work/identity.cdnn" \
        --engine example:copy | grep -q "engine example:copy"
    "$prefix/bin/cdnn" run "$work/identity.cdnn" --check | grep -q "every output matches"
    unset CDNN_PROVIDER_PATH
done
echo "install: pkg-config, find_package and the CLI all work from $prefix," \
     "and so does a provider built against the installed SDK"
