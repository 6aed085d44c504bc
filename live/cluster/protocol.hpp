#pragma once
//! The job master's protocol (`ctwin live master` <-> `ctwin live agent`): JSON bodies over HTTP/1.1.
//! Every request carries `Authorization: Bearer <job token>`; a wrong token is 401, a malformed
//! body 400 with the field's JSON pointer, an agent the master does not know 404 (it joins again).
//!   POST /v1/join    JoinRequest -> JoinReply     an agent registers (once per agent process)
//!   POST /v1/report  Report      -> Plan          its state, its trainer's lines, a fault; the answer
//!                                                 is what this node does now
//!   POST /v1/exchange ExchangeRequest -> ExchangeReply   a precheck group's GPUs hand each other
//!                                                 small blobs (the collective's id): each posts its
//!                                                 own and asks again until all are there
//!   GET  /v1/status                 the job: generation, phase, nodes (for people and tests)
//! Standard library and nlohmann/json only; the HTTP side lives in master_service and agent_link.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "live/job/messages.hpp"

namespace ctwin::live::cluster {

inline constexpr int kProtocolVersion = 3;  //!< 2: a fault carries its resolved class (effect, action); 3: a report says when it left
//! A report's `sent_us` (an agent's steady clock: time since its host booted) is at most ~31 years.
inline constexpr std::int64_t kLatestSentUs = 1'000'000'000'000'000;

struct ExchangeRequest {
  std::string key;   //!< the group's exchange, and which one of its calls
  int rank = 0, size = 1;
  std::string blob;  //!< hexadecimal
};
struct ExchangeReply {
  bool complete = false;
  std::vector<std::string> blobs;  //!< by rank, once complete
};

//! A message that is not one of the protocol's: `what()` names the field (JSON pointer) and why.
class ProtocolError : public BadInput {
 public:
  using BadInput::BadInput;
};

nlohmann::json to_json(const JoinRequest& m);
nlohmann::json to_json(const JoinReply& m);
nlohmann::json to_json(const Report& m);
nlohmann::json to_json(const Plan& m);
nlohmann::json to_json(const ExchangeRequest& m);
nlohmann::json to_json(const ExchangeReply& m);
//! Parse and check a body; throw ProtocolError.
JoinRequest parse_join_request(const std::string& body);
JoinReply parse_join_reply(const std::string& body);
Report parse_report(const std::string& body);
Plan parse_plan(const std::string& body);
ExchangeRequest parse_exchange_request(const std::string& body);
ExchangeReply parse_exchange_reply(const std::string& body);

//! Limits: a body this long, a trainer's line this long and this many lines per report.
inline constexpr std::size_t kLargestBody = 1 << 20;
inline constexpr std::size_t kLongestLine = 512;
inline constexpr std::size_t kMostLines = 1024;
inline constexpr std::size_t kMostEvents = 256;  //!< a node's rows in one report; a master away for long: the oldest go

}  // namespace ctwin::live::cluster
