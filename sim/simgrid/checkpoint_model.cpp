#include "sim/simgrid/checkpoint_model.hpp"

#include <cinttypes>
#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/simgrid/platform.hpp"
#include "sim/simgrid/subprocess.hpp"

namespace sg4 = simgrid::s4u;

namespace ctwin {
namespace {

constexpr int kChunks = 8;  //!< enough to overlap network and disk; equal sizes keep SimGrid fast

//! A node persisting its shard: the transfer of chunk i+1 overlaps the disk write of chunk i.
void persist_shard(sg4::Host* server, const sg4::Disk* disk, std::uint64_t chunk_bytes, double* done_at) {
  sg4::Host* self = sg4::this_actor::get_host();
  std::vector<sg4::IoPtr> writes;
  for (int i = 0; i < kChunks; ++i) {
    sg4::Comm::sendto(self, server, chunk_bytes);
    writes.push_back(disk->write_async(chunk_bytes));
  }
  for (auto& io : writes) io->wait();
  *done_at = sg4::Engine::get_clock();
}

//! A node restoring its shard: the read of chunk i+1 overlaps the transfer of chunk i.
void restore_shard(sg4::Host* server, const sg4::Disk* disk, std::uint64_t chunk_bytes, double* done_at) {
  sg4::Host* self = sg4::this_actor::get_host();
  sg4::IoPtr read = disk->read_async(chunk_bytes);
  for (int i = 0; i < kChunks; ++i) {
    read->wait();
    if (i + 1 < kChunks) read = disk->read_async(chunk_bytes);
    sg4::Comm::sendto(server, self, chunk_bytes);
  }
  *done_at = sg4::Engine::get_clock();
}

double run_phase(const Platform& platform, const StorageQuestion& q, bool save) {
  const auto chunk = static_cast<std::uint64_t>(q.shard_bytes / kChunks + 0.5);
  std::vector<double> done(static_cast<std::size_t>(q.writers), 0.0);
  const double start = sg4::Engine::get_clock();
  for (int w = 0; w < q.writers; ++w) {
    const auto server = static_cast<std::size_t>(w % q.servers);
    sg4::Actor::create(save ? "persist" : "restore", platform.nodes[static_cast<std::size_t>(w)],
                       save ? persist_shard : restore_shard, platform.storage[server], platform.disks[server], chunk,
                       &done[static_cast<std::size_t>(w)]);
  }
  sg4::Engine::get_instance()->run();
  double last = start;
  for (double d : done) last = std::max(last, d);
  return last - start;
}

StorageCosts compute(const StorageQuestion& q) {
  const std::string answer = run_in_child(
      [&q](int fd) {
        init_simgrid_engine();
        PlatformSpec spec;
        spec.nodes = q.writers;
        spec.node_link_bytes_per_s = q.node_link_bytes_per_s;
        spec.storage_servers = q.servers;
        spec.server_link_bytes_per_s = q.server_link_bytes_per_s;
        spec.disk_read_bytes_per_s = q.disk_read_bytes_per_s;
        spec.disk_write_bytes_per_s = q.disk_write_bytes_per_s;
        const Platform platform = build_platform(spec);
        ByteWriter out;
        out.put(run_phase(platform, q, true));
        out.put(run_phase(platform, q, false));
        write_all(fd, out.bytes);
      },
      "checkpoint I/O model");
  ByteReader in(answer);
  StorageCosts costs;
  costs.save_s = in.get<double>();
  costs.restore_s = in.get<double>();
  return costs;
}

}  // namespace

StorageQuestion StorageQuestion::from(const Scenario& s) {
  StorageQuestion q;
  q.writers = s.job.nodes;
  q.shard_bytes = s.checkpoint.size_per_gpu_bytes.value_or(0) * s.cluster.gpus_per_node;
  q.node_link_bytes_per_s = s.checkpoint.persist_bytes_per_s;
  q.servers = s.cluster.storage.servers;
  q.server_link_bytes_per_s = s.cluster.storage.network_bytes_per_s;
  q.disk_write_bytes_per_s = s.cluster.storage.write_bytes_per_s;
  q.disk_read_bytes_per_s = s.cluster.storage.read_bytes_per_s;
  return q;
}

std::string StorageQuestion::signature() const {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, "storage-v1 w=%d shard=%a node=%a servers=%d net=%a dw=%a dr=%a", writers,
                shard_bytes, node_link_bytes_per_s, servers, server_link_bytes_per_s, disk_write_bytes_per_s,
                disk_read_bytes_per_s);
  return buffer;
}

StorageCosts storage_costs(const StorageQuestion& question) {
  static std::mutex mutex;
  static std::map<std::string, StorageCosts> cache;
  const std::string key = question.signature();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  StorageCosts costs = compute(question);
  cache.emplace(key, costs);
  return costs;
}

}  // namespace ctwin
