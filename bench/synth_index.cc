// synth_index: a packed dataset with a synthetic index of N samples, for measuring what opening
// and starting a loader cost at 10^9 samples (docs/perf.md, "A billion samples").
//
//   synth_index OUT --samples 1000000000 --shard-records 10000 --classes 1000
//
// Every shard holds one tiny raw record per class (8x8 RGB) and an index of --shard-records
// entries, entry j pointing at the record of class j % classes. The index is what is at
// scale (24 bytes per sample: 24 GB at 10^9); the records are shared so that the set fits on
// one disk. The record area is sized as if each entry had its own record header (the
// footer's check that the records fit), the rest of it a hole in a sparse file. Headers, footers,
// checksums and the manifest are the format's own (docs/format.md), so the reader checks them as
// for any pack; only `stoker verify`'s contiguity check (records tile the shard) fails on it, by
// construction.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/packed_format.h"
#include "io/packed_manifest.h"
#include "io/packed_shard.h"
#include "xxhash.h"

namespace {

namespace packed = stoker::packed;
namespace io = stoker::io;

void write_all(int fd, const std::vector<uint8_t>& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      std::perror(path.c_str());
      std::exit(1);
    }
    done += static_cast<size_t>(n);
  }
}

// One record: header + raw payload of an 8x8 RGB image whose pixels depend on its class.
std::vector<uint8_t> make_record(uint32_t label) {
  constexpr uint32_t kSide = 8, kChannels = 3;
  std::vector<uint8_t> payload(packed::kRawHeaderSize + kSide * kSide * kChannels);
  std::copy(std::begin(packed::kRawMagic), std::end(packed::kRawMagic), payload.begin());
  packed::store_u32(payload.data() + 8, kSide);
  packed::store_u32(payload.data() + 12, kSide);
  payload[16] = kChannels;
  payload[17] = 0;  // uncompressed
  packed::store_u32(payload.data() + 20, kSide * kSide * kChannels);
  for (size_t i = packed::kRawHeaderSize; i < payload.size(); ++i) {
    payload[i] = static_cast<uint8_t>((label * 37 + i * 11) & 0xff);
  }
  std::vector<uint8_t> record(packed::kRecordHeaderSize);
  std::copy(std::begin(packed::kRecordMagic), std::end(packed::kRecordMagic), record.begin());
  packed::store_u32(record.data() + packed::record::kLabel, label);
  record[packed::record::kEncoding] = static_cast<uint8_t>(packed::Encoding::kRaw);
  record[packed::record::kChannels] = kChannels;
  packed::store_u32(record.data() + packed::record::kWidth, kSide);
  packed::store_u32(record.data() + packed::record::kHeight, kSide);
  packed::store_u32(record.data() + packed::record::kPayloadLength,
                    static_cast<uint32_t>(payload.size()));
  packed::store_u64(record.data() + packed::record::kChecksum,
                    io::record_checksum(record.data(), payload));
  record.insert(record.end(), payload.begin(), payload.end());
  return record;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"write a packed dataset with a synthetic index of N samples"};
  std::string out;
  uint64_t samples = 1000000000, per_shard = 10000;
  uint32_t classes = 1000;
  app.add_option("OUT", out, "output folder (created)")->required();
  app.add_option("--samples", samples, "samples in the index")->check(CLI::PositiveNumber);
  app.add_option("--shard-records", per_shard, "index entries per shard")
      ->check(CLI::PositiveNumber);
  app.add_option("--classes", classes, "classes (one record each per shard)")
      ->check(CLI::Range(1u, 100000u));
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(out);
  const auto start = std::chrono::steady_clock::now();

  // The records and the index are the same in every shard; only the header differs.
  std::vector<uint8_t> records;
  std::vector<uint64_t> offsets, checksums;
  uint32_t payload_length = 0;
  for (uint32_t c = 0; c < classes; ++c) {
    const std::vector<uint8_t> r = make_record(c);
    offsets.push_back(packed::kShardHeaderSize + records.size());
    checksums.push_back(packed::load_u64(r.data() + packed::record::kChecksum));
    payload_length = static_cast<uint32_t>(r.size() - packed::kRecordHeaderSize);
    records.insert(records.end(), r.begin(), r.end());
  }
  const uint64_t options_hash = XXH3_64bits("synth_index", 11);

  io::Manifest m;
  m.version = packed::kFormatVersion;
  m.records = samples;
  m.source_samples = samples;
  for (uint32_t c = 0; c < classes; ++c) m.classes.push_back("class_" + std::to_string(c));
  m.options_json = R"({"mode":"raw","synthetic_index":true})";
  m.options_hash = options_hash;
  m.source = "synthetic";
  m.source_fingerprint = "0000000000000000";
  std::vector<uint8_t> index;
  uint64_t shard_records_in_index = 0;
  for (uint64_t first = 0, number = 0; first < samples; first += per_shard, ++number) {
    const uint64_t n = std::min(per_shard, samples - first);
    const uint64_t index_offset = packed::kShardHeaderSize +
                                  std::max<uint64_t>(records.size(), packed::kRecordHeaderSize * n);
    if (n != shard_records_in_index) {  // the last shard may be shorter
      index.assign(n * packed::kIndexEntrySize, 0);
      for (uint64_t j = 0; j < n; ++j) {
        uint8_t* e = index.data() + j * packed::kIndexEntrySize;
        packed::store_u64(e, offsets[j % classes]);
        packed::store_u32(e + 8, payload_length);
        packed::store_u32(e + 12, static_cast<uint32_t>(j % classes));
        packed::store_u64(e + 16, checksums[j % classes]);
      }
      shard_records_in_index = n;
    }
    io::ShardHeader header;
    header.options_hash = options_hash;
    header.shard_number = number;
    header.first_record = first;
    header.first_source = first;
    const auto header_bytes = header.encode();
    io::ShardFooter footer;
    footer.record_count = n;
    footer.source_count = n;
    footer.index_offset = index_offset;
    footer.skipped_offset = index_offset + index.size();
    footer.skipped_count = 0;
    footer.tail_checksum = XXH3_64bits(index.data(), index.size());
    const auto footer_bytes = footer.encode(header.checksum);

    const std::string file = io::shard_file_name(number);
    const std::string path = (std::filesystem::path(out) / file).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      std::perror(path.c_str());
      return 1;
    }
    write_all(fd, std::vector<uint8_t>(header_bytes.begin(), header_bytes.end()), path);
    write_all(fd, records, path);
    if (::lseek(fd, static_cast<off_t>(index_offset), SEEK_SET) < 0) {  // the hole
      std::perror(path.c_str());
      return 1;
    }
    write_all(fd, index, path);
    write_all(fd, std::vector<uint8_t>(footer_bytes.begin(), footer_bytes.end()), path);
    ::close(fd);
    m.shards.push_back(io::ManifestShard{
        file, n, first, index_offset + index.size() + packed::kShardFooterSize, footer.checksum});
    m.payload_bytes += uint64_t{payload_length} * n;
    if (number % 10000 == 0) {
      std::fprintf(stderr, "synth_index: %llu/%llu samples\n",
                   static_cast<unsigned long long>(first),
                   static_cast<unsigned long long>(samples));
    }
  }
  m.fingerprint = io::manifest_fingerprint(m);
  std::ofstream(std::filesystem::path(out) / packed::kManifestName) << io::serialize_manifest(m);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("synth_index: %s: %llu samples in %zu shards, %.1f s\n", out.c_str(),
              static_cast<unsigned long long>(samples), m.shards.size(), s);
  return 0;
}
