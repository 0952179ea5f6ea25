// The label-list parser on text already read (private to src/io; open_file_list reads the
// file, the fuzzer feeds it bytes). The list's forms and rules: stoker/dataset.h and
// docs/format.md "Label lists". `list_name` names the list in errors and picks the form by its
// extension; relative paths resolve against its folder.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "stoker/dataset.h"

namespace stoker::io {

std::shared_ptr<Dataset> file_list_from_text(std::string_view text, const std::string& list_name,
                                             const FileListConfig& config);

}  // namespace stoker::io
