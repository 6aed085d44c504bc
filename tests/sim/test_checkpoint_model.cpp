// The SimGrid physical model of checkpoint I/O: fair sharing of disks and links.
#include <catch2/catch.hpp>

#include "sim/simgrid/checkpoint_model.hpp"

using namespace ctwin;

namespace {

StorageQuestion one_server(int writers) {
  StorageQuestion q;
  q.writers = writers;
  q.shard_bytes = 4e9;
  q.node_link_bytes_per_s = 100e9;  // fast links: the disk is the bottleneck
  q.servers = 1;
  q.server_link_bytes_per_s = 1e12;
  q.disk_write_bytes_per_s = 1e9;
  q.disk_read_bytes_per_s = 2e9;
  return q;
}

}  // namespace

TEST_CASE("persist time grows with concurrent writers as fair sharing predicts", "[storage][simgrid]") {
  for (int writers : {1, 2, 4, 8, 16}) {
    const StorageCosts c = storage_costs(one_server(writers));
    INFO(writers << " writers: save " << c.save_s << " s, restore " << c.restore_s << " s");
    // k writers share one 1 GB/s disk: k x 4 GB / 1 GB/s, plus one chunk's transfer before the disk starts.
    CHECK(c.save_s == Approx(writers * 4.0).epsilon(0.02));
    CHECK(c.restore_s == Approx(writers * 2.0).epsilon(0.02));
  }
}

TEST_CASE("the node's own link bounds a lone writer, and servers divide the load", "[storage][simgrid]") {
  StorageQuestion q = one_server(1);
  q.node_link_bytes_per_s = 0.5e9;  // slower than the disk
  // 4 GB through 0.5 GB/s, then the disk write of the last 0.5 GB chunk (the others overlap).
  CHECK(storage_costs(q).save_s == Approx(8.0 + 0.5).epsilon(0.01));

  StorageQuestion spread = one_server(8);
  spread.servers = 4;  // two writers per server
  CHECK(storage_costs(spread).save_s == Approx(8.0).epsilon(0.02));
}

TEST_CASE("answers are cached by question", "[storage][simgrid]") {
  const StorageQuestion q = one_server(3);
  CHECK(q.signature() == one_server(3).signature());
  CHECK(q.signature() != one_server(4).signature());
  CHECK(storage_costs(q).save_s == storage_costs(q).save_s);
}
