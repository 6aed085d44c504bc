#include "live/cluster/master_exchange.hpp"

#include <chrono>
#include <thread>

#include "live/cluster/agent_link.hpp"
#include "live/cluster/protocol.hpp"

namespace ctwin::live::cluster {

namespace {

std::string to_hex(const std::vector<unsigned char>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  for (const unsigned char b : bytes) text += {digits[b >> 4], digits[b & 15]};
  return text;
}

std::vector<unsigned char> from_hex(const std::string& text) {
  auto value = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::vector<unsigned char> bytes;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) bytes.push_back(static_cast<unsigned char>(value(text[i]) * 16 + value(text[i + 1])));
  return bytes;
}

}  // namespace

std::vector<std::vector<unsigned char>> MasterExchange::allgather(const std::vector<unsigned char>& mine) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(patience_s_));
  ExchangeRequest request{key_ + "/" + std::to_string(calls_++), rank_, size_, to_hex(mine)};
  const std::string body = to_json(request).dump();
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    int status = 0;
    if (const auto reply = post_to_master(host_, port_, token_, "/v1/exchange", body, status)) {
      const ExchangeReply answer = parse_exchange_reply(*reply);
      if (answer.complete) {
        if (static_cast<int>(answer.blobs.size()) != size_) throw std::runtime_error("the master's exchange " + request.key + " has the wrong size");
        std::vector<std::vector<unsigned char>> all;
        for (const auto& blob : answer.blobs) all.push_back(from_hex(blob));
        return all;
      }
    } else if (status == 400 || status == 401 || status == 409) {
      throw std::runtime_error("the master refused exchange " + request.key + " (HTTP " + std::to_string(status) + ")");
    }
    if (Clock::now() + pause > deadline)
      throw BootstrapTimeout("exchange " + request.key + ": not every member of the group came within " +
                             std::to_string(static_cast<long>(patience_s_)) + " s");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));  // a precheck round waits on it: short polls, few of them
  }
}

}  // namespace ctwin::live::cluster
