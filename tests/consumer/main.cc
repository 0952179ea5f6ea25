// Uses the public API of the installed package: opens the data set given on the command
// line, runs one epoch of a loader and prints the version, the batch count and the images.
#include <cstdio>
#include <memory>

#include "stoker/dataset.h"
#include "stoker/loader.h"
#include "stoker/version.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATA\n", argv[0]);
    return 2;
  }
  std::shared_ptr<stoker::Dataset> data = stoker::open_dataset(argv[1]);
  stoker::LoaderConfig config;
  config.batch_size = 4;
  config.threads = 2;
  config.rank = 0;
  config.world_size = 1;
  config.transform.size = 32;
  stoker::Loader loader(data, config);
  loader.set_epoch(0);
  int batches = 0;
  long images = 0;
  while (auto batch = loader.next()) {
    ++batches;
    for (uint8_t v : batch->valid) images += v;
  }
  std::printf("stoker %s: %d batches, %ld images\n", STOKER_VERSION_STRING, batches, images);
  return 0;
}
