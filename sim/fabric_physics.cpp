#include "sim/fabric_physics.hpp"

#include "sim/simgrid/transfer_fabric.hpp"

namespace ctwin {

FabricPhysics::FabricPhysics(StoragePath path, std::string cache_directory)
    : path_(std::move(path)), path_signature_(path_.signature()), disk_(std::move(cache_directory), "transfer") {}

TransferCost FabricPhysics::cost(const TransferQuestion& question) const {
  const std::string key = path_signature_ + " | " + question.signature();
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto it = memory_.find(key); it != memory_.end()) return it->second;
  TransferCost cost;
  if (const auto answer = disk_.read(key); answer && answer->contains("us") && answer->contains("training_speed")) {
    cost.us = answer->at("us").get<Micros>();
    cost.training_speed = answer->at("training_speed").get<double>();
    ++read_from_disk_;
  } else {
    cost = simulate_transfer(path_, question);
    ++simulated_;
    disk_.write(key, {{"us", cost.us}, {"training_speed", cost.training_speed}});
  }
  return memory_[key] = cost;
}

int FabricPhysics::simulated() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return simulated_;
}

int FabricPhysics::read_from_disk() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return read_from_disk_;
}

}  // namespace ctwin
