# Cross build for aarch64 Linux with Debian's cross compiler (g++-aarch64-linux-gnu) against the
# arm64 -dev packages of Debian's multiarch (libjpeg62-turbo-dev:arm64, ...: run.sh installs
# them). Tests run under qemu's user-mode emulator (qemu-user): ctest and gtest's test discovery
# start every test binary through CMAKE_CROSSCOMPILING_EMULATOR.
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: libraries and CMake configs in /usr/lib/aarch64-linux-gnu, headers in /usr/include.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# pkg-config looks at the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
