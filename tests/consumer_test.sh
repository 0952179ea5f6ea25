#!/usr/bin/env bash
# consumer_test.sh BUILD_DIR STOKER_CLI: installs stoker's C++ package from BUILD_DIR into a
# temporary prefix (`cmake --install --component dev`), builds tests/consumer against it with
# find_package(stoker) alone, and runs it on a small synthetic data set. A private header
# (src/) must not be reachable from the installed tree.
set -euo pipefail
build=$1
cli=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "${STOKER_TEST_TMP:-/tmp}"
tmp=$(cd "$(mktemp -d "${STOKER_TEST_TMP:-/tmp}/consumer.XXXXXX")" && pwd)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" --component dev >/dev/null
test -f "$tmp/prefix/include/stoker/loader.h"
test -f "$tmp/prefix/include/stoker/version.h"
test -f "$tmp/prefix/lib/cmake/stoker/stokerConfig.cmake"
# Exactly the public headers (include/stoker/*.h and the generated version.h): src/ holds the
# private ones, which must never be installed.
installed=$(cd "$tmp/prefix/include" && find . -name '*.h' | sort)
expected=$( (cd "$here/../include" && find . -name '*.h'; echo ./stoker/version.h) | sort)
if [ "$installed" != "$expected" ]; then
  echo "consumer_test: installed headers differ from include/stoker:" >&2
  diff <(echo "$expected") <(echo "$installed") >&2
  exit 1
fi

# Each installed header compiles alone, and includes only the C++ standard library and stoker's
# own headers: fmt, nlohmann-json and the codecs stay inside the libraries.
cxx=${CXX:-c++}
standard=" algorithm any array atomic bit bitset cassert cctype cerrno cfloat charconv chrono cinttypes
  climits cmath compare concepts condition_variable cstddef cstdint cstdio cstdlib cstring ctime
  deque exception filesystem functional initializer_list iosfwd iostream istream iterator limits
  list map memory mutex new numbers numeric optional ostream random ranges set shared_mutex
  source_location span sstream stdexcept stop_token string string_view system_error thread tuple
  type_traits typeinfo unordered_map unordered_set utility variant vector "
for header in $(cd "$tmp/prefix/include" && find stoker -name '*.h' | sort); do
  while read -r included; do
    case $included in
      stoker/*) ;;
      *) if [[ $standard != *" $included "* ]]; then
           echo "consumer_test: $header includes <$included>, not a standard or stoker header" >&2
           exit 1
         fi ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' \
             "$tmp/prefix/include/$header")
  echo "#include <$header>" | "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror \
    -I "$tmp/prefix/include" -x c++ - || { echo "consumer_test: $header does not compile alone" >&2; exit 1; }
done

cmake -S "$here/consumer" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
cmake --build "$tmp/build" >/dev/null
"$cli" synth "$tmp/data" --images 10 --classes 2 >/dev/null
out=$("$tmp/build/consumer" "$tmp/data")
echo "$out"
version=$(sed -n 's/^project(stoker VERSION \([0-9.]*\).*/\1/p' "$here/../CMakeLists.txt")
[ "$out" = "stoker $version: 3 batches, 10 images" ]
