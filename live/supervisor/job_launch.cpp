#include "live/supervisor/job_launch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/atomic_file.hpp"
#include "live/checkpoint/disk_store.hpp"
#include "live/job/cadence_json.hpp"

namespace ctwin::live {

void add_job_environment(const Plan& p, std::vector<std::pair<std::string, std::string>>& env, std::vector<std::string>& argv) {
  env.emplace_back("CTWIN_GENERATION", std::to_string(p.generation));
  if (p.restore_step >= -1) env.emplace_back("CTWIN_RESTORE_STEP", std::to_string(p.restore_step));
  if (p.master_port <= 0) return;  // a job of one: the trainer is launched as it was given, its rendezvous its own
  const std::pair<std::string, std::string> words[] = {
      {"{nnodes}", std::to_string(p.nnodes)},                  {"{node_rank}", std::to_string(p.node_rank)},
      {"{nproc_per_node}", std::to_string(p.nproc_per_node)}, {"{master_addr}", p.master_addr},
      {"{master_port}", std::to_string(p.master_port)}};
  for (auto& arg : argv)
    for (const auto& [word, value] : words)
      for (auto at = arg.find(word); at != std::string::npos; at = arg.find(word, at + value.size())) arg.replace(at, word.size(), value);
  env.insert(env.end(), {{"MASTER_ADDR", p.master_addr},
                         {"MASTER_PORT", std::to_string(p.master_port)},
                         {"NNODES", std::to_string(p.nnodes)},
                         {"NODE_RANK", std::to_string(p.node_rank)},
                         {"GROUP_RANK", std::to_string(p.node_rank)},
                         {"WORLD_SIZE", std::to_string(p.nnodes * p.nproc_per_node)},
                         {"RANK", std::to_string(p.node_rank * p.nproc_per_node)},
                         {"LOCAL_RANK", "0"},
                         {"LOCAL_WORLD_SIZE", std::to_string(p.nproc_per_node)}});
}

namespace {

//! Whether `store`'s shard of `m` verifies: read once per process, the verdict kept while the file
//! keeps its size and time (a shard is written once; a changed one is read again).
bool shard_verifies(const flash::DiskStore& store, const flash::Manifest& m, std::string& why) {
  struct Verdict {
    std::uintmax_t size;
    std::filesystem::file_time_type written;
    std::string why;
  };
  static std::mutex mutex;
  static std::map<std::string, Verdict> verdicts;
  const std::string path = store.shard_path(m);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const auto written = std::filesystem::last_write_time(path, ec);
  {
    std::lock_guard lock(mutex);
    if (const auto it = verdicts.find(path); !ec && it != verdicts.end() && it->second.size == size && it->second.written == written) {
      why = it->second.why;
      return why.empty();
    }
  }
  why.clear();
  const bool ok = store.verify(m, why);
  std::lock_guard lock(mutex);
  if (!ec) verdicts[path] = {size, written, ok ? std::string() : why};
  return ok;
}

}  // namespace

std::vector<std::int64_t> steps_every_rank_holds(const flash::SlotLocation& first, int ranks, const std::string& persist_dir, int world,
                                                 bool replicated, std::vector<std::string>* refused) {
  std::vector<std::int64_t> on_disk;
  if (!persist_dir.empty()) {
    try {
      on_disk = flash::DiskStore(persist_dir, first.rank, world, 2, replicated).complete_steps();
      // A step is held when this node's shards of it are whole: one bad shard must not be offered
      // (its restore would fail, and the job restart from it again and again).
      std::erase_if(on_disk, [&](std::int64_t step) {
        for (int r = 0; r < ranks; ++r) {
          const flash::DiskStore store(persist_dir, first.rank + r, world, 2, replicated);
          const auto manifest = store.manifest(step);
          std::string why = "rank " + std::to_string(first.rank + r) + "'s manifest is missing or malformed";
          if (manifest && shard_verifies(store, *manifest, why)) continue;
          // Pruned while this looked (a rank ahead persisted a newer step): gone, not refused.
          if (refused && store.complete(step)) refused->push_back("step " + std::to_string(step) + " is not restorable: " + why);
          return true;
        }
        return false;
      });
    } catch (const std::exception&) {  // an unreadable disk holds nothing restorable
    }
  }
  std::optional<std::set<std::int64_t>> common;
  for (int r = 0; r < ranks; ++r) {
    std::set<std::int64_t> mine(on_disk.begin(), on_disk.end());
    for (int slot = 0; slot < 2; ++slot) {
      const auto found = flash::ShmSlot::open_existing(flash::SlotLocation{first.shm_dir, first.name, first.rank + r}.path(slot), false);
      if (found.valid() && found.summary().state == flash::SlotState::Complete) mine.insert(found.summary().step);
    }
    if (!common) common = std::move(mine);
    else std::erase_if(*common, [&](std::int64_t step) { return !mine.count(step); });
  }
  return common ? std::vector<std::int64_t>(common->rbegin(), common->rend()) : std::vector<std::int64_t>{};
}

std::string claim_persist_folder(const std::string& persist_dir, const std::string& run, bool adopt) {
  namespace fs = std::filesystem;
  const fs::path owner_file = fs::path(persist_dir) / "ctwin-run";
  std::string owner;
  if (std::ifstream in(owner_file); in) std::getline(in, owner);
  if (owner == run) return {};
  bool has_steps = false;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(persist_dir, ec)) has_steps |= entry.path().filename().string().rfind("step-", 0) == 0;
  if ((has_steps || !owner.empty()) && !adopt)
    return "the persist folder " + persist_dir + " holds the steps of " + (owner.empty() ? std::string("a run that did not claim it") : "run " + owner) +
           ", not of this one (" + run + "): start the master with --resume to take them, or give this job another folder";
  try {
    fs::create_directories(persist_dir);
    write_file_atomically(owner_file.string(), run + "\n");
  } catch (const std::exception& e) {
    return std::string("cannot claim the persist folder: ") + e.what();
  }
  return {};
}

CadenceFile::CadenceFile() {
  const char* tmp = std::getenv("TMPDIR");
  std::string folder = std::string(tmp && *tmp ? tmp : "/tmp") + "/ctwin-control-XXXXXX";
  if (!::mkdtemp(folder.data())) throw std::runtime_error("mkdtemp " + folder + ": " + std::strerror(errno));
  folder_ = folder;
  path_ = folder_ + "/cadence.json";
}

CadenceFile::~CadenceFile() {
  ::unlink(path_.c_str());
  ::rmdir(folder_.c_str());
}

void CadenceFile::publish(const CheckpointCadence& cadence, std::int64_t generation, std::int64_t restore_step) {
  if (cadence.revision == revision_ && generation == generation_) return;
  nlohmann::json j = cadence_to_json(cadence);
  j["generation"] = generation;
  j["restore_step"] = restore_step;
  write_file_atomically(path_, j.dump() + "\n");
  revision_ = cadence.revision;
  generation_ = generation;
}

void SectionWindow::add(int local_rank, int group, double seconds) {
  auto& [rank_group, times] = ranks_[local_rank];
  rank_group = group;
  times.push_back(seconds);
  if (times.size() > 64) times.pop_front();
}

std::vector<RankSection> SectionWindow::medians() {
  std::vector<RankSection> out;
  for (auto& [rank, entry] : ranks_) {
    std::vector<double> v(entry.second.begin(), entry.second.end());
    if (v.empty()) continue;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    out.push_back({rank, entry.first, v[v.size() / 2]});
    entry.second.clear();
  }
  return out;
}

}  // namespace ctwin::live
