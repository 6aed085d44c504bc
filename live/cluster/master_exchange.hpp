#pragma once
//! A Bootstrap through the job master (POST /v1/exchange): the GPUs of a precheck group, on
//! different nodes, hand each other the collective's id without MPI. Each allgather posts this
//! rank's blob and asks again until every member's is in, or the patience runs out
//! (BootstrapTimeout): a member that never comes cannot hold the others.

#include <string>

#include "live/precheck/bootstrap.hpp"

namespace ctwin::live::cluster {

class MasterExchange final : public Bootstrap {
 public:
  MasterExchange(std::string host, int port, std::string token, std::string key, int rank, int size)
      : host_(std::move(host)), token_(std::move(token)), key_(std::move(key)), port_(port), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::vector<unsigned char>> allgather(const std::vector<unsigned char>& mine) override;
  void set_patience(double seconds) override { patience_s_ = seconds; }

 private:
  std::string host_, token_, key_;
  int port_, rank_, size_;
  int calls_ = 0;
  double patience_s_ = 60;
};

}  // namespace ctwin::live::cluster
