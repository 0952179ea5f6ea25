// The macros that raise stoker::Error (stoker/error.h) with a fmt-formatted message and the
// source location. Private: the installed headers carry no fmt.
//   STOKER_THROW / STOKER_CHECK            kInternal
//   STOKER_BAD_DATA / STOKER_CHECK_DATA    kBadData (the only kind the skip policy may skip)
//   STOKER_THROW_ARG / STOKER_CHECK_ARG    kInvalidArgument
//   STOKER_THROW_IO(errno, path, ...)      kIo
// e.g. STOKER_BAD_DATA("{}: not a JPEG, PNG or WebP image", path);
#pragma once

#include <fmt/format.h>

#include <source_location>

#include "stoker/error.h"

#define STOKER_THROW_AS(kind, ...) \
  ::stoker::detail::throw_error(kind, ::fmt::format(__VA_ARGS__), std::source_location::current())

#define STOKER_CHECK_AS(kind, cond, ...)  \
  do {                                    \
    if (!(cond)) {                        \
      STOKER_THROW_AS(kind, __VA_ARGS__); \
    }                                     \
  } while (0)

#define STOKER_THROW(...) STOKER_THROW_AS(::stoker::ErrorKind::kInternal, __VA_ARGS__)
#define STOKER_CHECK(cond, ...) STOKER_CHECK_AS(::stoker::ErrorKind::kInternal, cond, __VA_ARGS__)
#define STOKER_BAD_DATA(...) STOKER_THROW_AS(::stoker::ErrorKind::kBadData, __VA_ARGS__)
#define STOKER_CHECK_DATA(cond, ...) \
  STOKER_CHECK_AS(::stoker::ErrorKind::kBadData, cond, __VA_ARGS__)
#define STOKER_THROW_ARG(...) STOKER_THROW_AS(::stoker::ErrorKind::kInvalidArgument, __VA_ARGS__)
#define STOKER_CHECK_ARG(cond, ...) \
  STOKER_CHECK_AS(::stoker::ErrorKind::kInvalidArgument, cond, __VA_ARGS__)
// An I/O error: `err` is the errno, `path` the file; the message is formatted as usual.
#define STOKER_THROW_IO(err, path, ...)                                               \
  ::stoker::detail::throw_error(::stoker::ErrorKind::kIo, ::fmt::format(__VA_ARGS__), \
                                std::source_location::current(), err, path)
