# The C/C++ libraries stoker builds against, found all at once: when some are missing, one
# message names them with the packages that provide them (Debian/Ubuntu and Fedora/RHEL), rather
# than CMake stopping at the first with its own trace. Sets the targets the layers link:
# fmt::fmt, nlohmann_json::nlohmann_json, CLI11::CLI11, JPEG::JPEG, PNG::PNG, PkgConfig::WEBP,
# PkgConfig::XXHASH, PkgConfig::ZSTD, CURL::libcurl; what is missing in stoker_missing_names,
# stoker_missing_debian, stoker_missing_fedora (CMakeLists.txt reports them, at top level so
# that the message comes without a call stack).
set(stoker_missing_names "")
set(stoker_missing_debian "")
set(stoker_missing_fedora "")
# stoker_require(FOUND NAME DEBIAN FEDORA): records NAME as missing unless FOUND is true.
macro(stoker_require found name debian fedora)
  if(NOT ${found})
    list(APPEND stoker_missing_names ${name})
    list(APPEND stoker_missing_debian ${debian})
    list(APPEND stoker_missing_fedora ${fedora})
  endif()
endmacro()

find_package(PkgConfig QUIET)
stoker_require(PKG_CONFIG_FOUND pkg-config pkg-config pkgconf-pkg-config)
find_package(fmt QUIET)
stoker_require(fmt_FOUND fmt libfmt-dev fmt-devel)
find_package(nlohmann_json QUIET)
stoker_require(nlohmann_json_FOUND nlohmann-json nlohmann-json3-dev json-devel)
find_package(CLI11 QUIET)
stoker_require(CLI11_FOUND CLI11 libcli11-dev cli11-devel)
find_package(JPEG QUIET)
stoker_require(JPEG_FOUND libjpeg-turbo libjpeg-dev libjpeg-turbo-devel)
find_package(PNG QUIET)
stoker_require(PNG_FOUND libpng libpng-dev libpng-devel)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(WEBP QUIET IMPORTED_TARGET libwebp)
  pkg_check_modules(XXHASH QUIET IMPORTED_TARGET libxxhash)
  pkg_check_modules(ZSTD QUIET IMPORTED_TARGET libzstd)
endif()
stoker_require(WEBP_FOUND libwebp libwebp-dev libwebp-devel)
stoker_require(XXHASH_FOUND xxhash libxxhash-dev xxhash-devel)
stoker_require(ZSTD_FOUND zstd libzstd-dev libzstd-devel)
# HTTP(S) range reads and S3 (CURLOPT_AWS_SIGV4 came in 7.75).
find_package(CURL 7.75 QUIET)
stoker_require(CURL_FOUND "libcurl >= 7.75" libcurl4-openssl-dev libcurl-devel)
