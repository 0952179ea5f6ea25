// Datasets: an indexed list of labelled samples whose encoded bytes can be read by index.
//
// Sources:
//  - ImageFolder: DATA/<class>/**/<file> with torchvision's extension list
//    (.jpg .jpeg .png .ppm .bmp .pgm .tif .tiff .webp, case-insensitive); classes are the
//    sorted sub-folder names, label = class position; samples sorted by path within a class,
//    as torchvision.datasets.ImageFolder does (files are followed through symlinks).
//  - File list (a regular file), in one of four forms; paths relative to the list's folder
//    (absolute paths allowed); a malformed line is an error naming the file and line number:
//      * headerless `path<TAB>label` lines (the label after the last tab, an integer in
//        [0, 2^24 - 1]); blank lines and lines starting with '#' are skipped;
//      * a table with a header: `.csv` (comma), or tab-separated when the first line names a
//        path column; RFC 4180 quoting; the path column is the one named by
//        FileListConfig::path_column, else the first of path, file, filename, image,
//        image_path, filepath, img (case-insensitive); the label column likewise, else the
//        first of label, labels, class, target, category, y, and without one the list is
//        label-free;
//      * JSON lines (`.jsonl`, `.ndjson`, or a file starting with '{'): one object per line,
//        the same member names; a label is a number, a class name or a list of them.
//    Labels: when every label is a decimal integer they are the class ids and classes() is
//    "0", "1", ... up to the largest; otherwise they are class names, classes() the sorted
//    names (as ImageFolder sorts its folders) and the ids their positions. Multi-label: a
//    JSON list, or a table field with several labels separated by ';' or '|' (or by spaces
//    when all are integers, "3 7 12"): then multi_label() is true and label_set() gives each
//    sample's ids. A label-free list has label() -1 and no classes. Opening a list does not
//    stat the listed files, so its fingerprint covers the paths as written and the labels.
//  - WebDataset tar shards: a path ending in .tar, a brace pattern ("train-{000..099}.tar"),
//    "::"-joined patterns, or http(s):// and s3:// locations (HTTP range reads; S3 with SigV4
//    credentials from the AWS_* variables or ~/.aws). A sample is the consecutive members
//    sharing a key (folders + base name up to the first dot); its image the .jpg/.png/.webp/...
//    member, its label the .cls, else .json label member, else .txt (FileListConfig's
//    label_column picks another extension or JSON member); labels become ids as in file lists.
//    Each shard's member index is built in one pass and cached like a folder's. Remote samples
//    are read ahead as the loader announces them (read_ahead). Spec: docs/format.md.
//
// A folder's index is cached (see ImageFolderConfig::cache) so that N ranks on a shared file
// system do not each walk a million files: the cache is keyed by the folder's canonical path
// and validated by the inode and modification time of every folder the walk read. A file
// rewritten in place (same name) is not noticed until a folder changes.
//
// Thread-safety: after construction, all const methods may be called from any thread.
// read() failures throw stoker::Error naming the path: kIo for a failed system call (missing
// file, EIO, EACCES: errno and path on the error), kBadData for what the sample itself is (a
// directory or FIFO named like an image, a file over the size limit, a corrupt packed record).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stoker/io_config.h"

namespace stoker {

// What a per-sample field holds (Dataset::field_kind), which says how it is handed over:
// kText UTF-8 text (Python: str), kJson the text of a JSON value (parsed), kBytes anything.
enum class FieldKind { kText, kJson, kBytes };
const char* to_string(FieldKind kind);  // "text" | "json" | "bytes"
// Throws stoker::Error (kArgument) for another name.
FieldKind parse_field_kind(const std::string& name);
// The kind a WebDataset member's field has by its name: "json" and "json.KEY" kJson; "txt",
// "text", "caption", "cls" and names ending ".txt" kText; any other kBytes.
FieldKind member_field_kind(const std::string& field);

class Dataset {
 public:
  virtual ~Dataset() = default;

  virtual int64_t size() const = 0;
  virtual int64_t label(int64_t index) const = 0;  // -1: the dataset has no labels
  // A multi-label dataset: label_set(index) holds each sample's class ids (sorted, unique,
  // maybe none) and label(index) the first of them (-1 for none). Otherwise false and empty.
  virtual bool multi_label() const { return false; }
  virtual std::span<const int32_t> label_set(int64_t /*index*/) const { return {}; }
  // Human-readable name of a sample for messages: its path.
  virtual std::string name(int64_t index) const = 0;
  // Reads the encoded bytes of sample `index` into `out` (resized to fit; capacity reused).
  // Throws "NAME: <strerror>" (kIo), or "NAME: dangling symbolic link", "NAME: is a
  // directory", "NAME: not a regular file", "NAME: file too large (N bytes; the limit is M)"
  // above 1 GiB (kBadData).
  virtual void read(int64_t index, std::vector<uint8_t>& out) const = 0;
  // Read-ahead hints, for storage where a read costs a round trip (remote WebDataset shards):
  // the samples about to be read, in order; read() then finds them fetched or in flight.
  // cancel_read_ahead() forgets the hints not read yet (a loader starting over). Without
  // read-ahead (local data) both do nothing.
  virtual void read_ahead(std::span<const int64_t> /*indices*/) const {}
  virtual void cancel_read_ahead() const {}
  // A dataset stored in shards: the end index of each (increasing, the last = size()), so that
  // the sampler can shuffle in shard windows; empty for others. prefers_shard_order(): whether
  // reads in shard order are much cheaper than random ones (remote shards), which makes shard
  // windows the loader's default.
  virtual std::vector<int64_t> shard_ends() const { return {}; }
  virtual bool prefers_shard_order() const { return false; }
  virtual const std::vector<std::string>& classes() const = 0;
  // Per-sample fields besides the image and the label (captions, metadata; docs/fields.md).
  // has_field: whether the dataset can give `field` at all: a WebDataset member extension
  // that some sample has ("txt", "json", "cls", ...) or "json.KEY" (one member of the sample's
  // .json object); a file list's FileListConfig::field_columns. read_field: sample `index`'s value
  // into `out`: the member's bytes, or for "json.KEY" the value as JSON text ("0.31", "\"a cat\"",
  // "[1, 2]"). A sample without it is kBadData naming the sample and what it has; storage errors
  // are kIo, as read()'s. A dataset without fields says has_field false and read_field throws
  // kArgument.
  virtual bool has_field(const std::string& /*field*/) const { return false; }
  virtual void read_field(int64_t index, const std::string& field, std::string& out) const;
  // The kind of a field has_field() gives: member_field_kind(field) unless the dataset knows
  // better (a list's columns are text; a pack's kinds are in its manifest).
  virtual FieldKind field_kind(const std::string& field) const { return member_field_kind(field); }
  // 16 hex digits identifying the dataset's content listing (sorted paths, sizes, labels).
  // Ranks compare it to be sure they index the same data.
  virtual std::string fingerprint() const = 0;
  // Samples a filter left out (filter_dataset); 0 for any other dataset.
  virtual int64_t filtered() const { return 0; }
  // Short description: "image-folder /data/train (1281167 samples, 1000 classes)".
  virtual std::string describe() const = 0;
};

struct ImageFolderConfig {
  // Where to cache the folder's index: empty = $STOKER_CACHE_DIR (read when the folder is
  // opened), else $XDG_CACHE_HOME/stoker, else ~/.cache/stoker; "off" (or, for empty,
  // STOKER_CACHE_DIR=off) disables the cache.
  // The cache is never a source of errors: a bad file is ignored, a failed write is a warning.
  std::string cache = "";
};

std::shared_ptr<Dataset> open_image_folder(const std::filesystem::path& root,
                                           const ImageFolderConfig& options = {});
// Which columns (members) of a table or JSON-lines list hold the path and the label; empty:
// the first of the usual names (above).
struct FileListConfig {
  std::string path_column = {};
  std::string label_column = {};
  // Columns (table lists) or members (JSON lines) kept as per-sample fields
  // (Dataset::read_field): a text value as it is, a JSON member that is not a string as JSON
  // text. A list asked for fields is parsed at each open (not cached as a table file); a row
  // without one of them (a JSON line missing the member) is bad data when its field is read.
  std::vector<std::string> field_columns = {};
};

// The parsed list is cached in $STOKER_CACHE_DIR (as the folder index is; "off" disables it)
// as a table file that the next open maps instead of parsing (docs/format.md, "Table files"):
// a 1.28 M-sample list then opens in milliseconds and adds a few MiB of memory, not ~220.
std::shared_ptr<Dataset> open_file_list(const std::filesystem::path& list,
                                        const FileListConfig& config = {});

// A folder opens as an ImageFolder, a regular file as a file list (`lists` for its columns),
// a packed dataset's folder or manifest as the packed dataset; a .tar path, a pattern with
// braces or "::", or an http(s):// or s3:// location as WebDataset shards (`lists`'
// label_column: the label's extension or JSON member). `io` (validated here) says how the
// dataset reads its storage, for as long as it lives (stoker/io_config.h).
std::shared_ptr<Dataset> open_dataset(const std::filesystem::path& path,
                                      const FileListConfig& lists = {}, const IoConfig& io = {});

// One condition of a filter on per-sample fields (Dataset::read_field): `field op value` with
// op one of < <= > >= == !=. A value that parses as a number compares the field as a number
// (its text read as a JSON number: "0.31", "7"); otherwise as text (a JSON string field is
// compared without its quotes).
struct FieldCondition {
  std::string field;
  std::string op;
  std::string value;
};

// The samples of `base` for which every condition holds, in base order, as a dataset of their
// own: the sampler, the ranks' exactly-once split and resume all see only them. Evaluated
// here, each sample's fields read once (16 reads at a time; remote shards: one request per
// field), before any image is decoded. A sample whose field is missing, or not a number where
// a number is compared, does not pass; storage errors are thrown. filtered() counts the
// samples left out; the fingerprint covers base's and the conditions.
std::shared_ptr<Dataset> filter_dataset(std::shared_ptr<const Dataset> base,
                                        std::vector<FieldCondition> where);

// data.read(index, out), tried again after an I/O error as `policy` says (a flaky network
// mount, a storage server restarting); other kinds of error are not retried. The last I/O
// error is rethrown with the number of tries added to its message, keeping errno and path.
// These are the sample's only retries: meanwhile the remote layer sends each request once
// (stoker/io_config.h), so a sample costs at most policy.attempts requests.
void read_with_retries(const Dataset& data, int64_t index, std::vector<uint8_t>& out,
                       const IoRetryPolicy& policy = {});
// data.read_field(index, field, out) with the same retries.
void read_field_with_retries(const Dataset& data, int64_t index, const std::string& field,
                             std::string& out, const IoRetryPolicy& policy = {});

}  // namespace stoker
