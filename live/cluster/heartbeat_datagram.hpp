#pragma once
//! An agent's steady-state heartbeat as one UDP datagram, for jobs of 10,000 nodes: while nothing
//! changes but the step, an HTTP report per second per node costs the master ~100 µs each (a
//! connection and an exchange); a datagram costs a few. Anything that changes (a state, a
//! generation, a fault, node rank 0's trainer lines) still goes by HTTP.
//!
//!   ctwin-heartbeat 2 AGENT INCARNATION SEQ GENERATION STATE STEP KNOWN_GENERATION KNOWN_PLAN KNOWN_CADENCE MAC
//!   ctwin-plan 1 AGENT SEQ GENERATION PLAN MAC           the master, when the agent's plan is stale
//!   ctwin-unknown 1 AGENT SEQ MAC                        the master does not know the agent: join again
//!
//! MAC: HMAC-SHA256 keyed with the job's token over the text before it, the first 16 bytes in hex:
//! the token never travels, a forged or altered datagram is dropped, and SEQ (increasing per
//! agent) drops a replayed one. INCARNATION is the master process's (new at each start, in every
//! plan): a datagram captured before a master restarted is refused by the master after it, though
//! its SEQ is new to that master (it keeps no sequence in its journal).

#include <cstdint>
#include <optional>
#include <string>

#include "live/job/messages.hpp"

namespace ctwin::live::cluster {

inline constexpr std::size_t kLargestDatagram = 512;

std::string encode(const Heartbeat& h, const std::string& token);
std::string encode(const HeartbeatAnswer& a, const std::string& token);
//! nullopt for anything that is not a well-formed datagram with a valid MAC under `token`.
std::optional<Heartbeat> decode_heartbeat(const std::string& datagram, const std::string& token);
std::optional<HeartbeatAnswer> decode_answer(const std::string& datagram, const std::string& token);

}  // namespace ctwin::live::cluster
