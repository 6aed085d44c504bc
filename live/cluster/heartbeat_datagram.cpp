#include "live/cluster/heartbeat_datagram.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "live/cluster/master_service.hpp"

namespace ctwin::live::cluster {

namespace {

//! HMAC-SHA256 through OpenSSL's EVP_MAC, keyed once per token and thread: each datagram then
//! re-initialises with the key already set (the ipad/opad blocks hashed once), not a key schedule
//! each time.
class Hmac {
 public:
  explicit Hmac(const std::string& key) : key_(key), mac_(EVP_MAC_fetch(nullptr, "HMAC", nullptr)) {
    if (!mac_ || !(ctx_ = EVP_MAC_CTX_new(mac_))) throw std::runtime_error("OpenSSL has no HMAC");
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(ctx_, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) != 1)
      throw std::runtime_error("OpenSSL: HMAC-SHA256 could not be keyed");
  }
  ~Hmac() {
    EVP_MAC_CTX_free(ctx_);
    EVP_MAC_free(mac_);
  }
  Hmac(const Hmac&) = delete;
  Hmac& operator=(const Hmac&) = delete;
  const std::string& key() const { return key_; }
  void sign(const std::string& text, unsigned char (&digest)[32]) {
    std::size_t n = 0;
    if (EVP_MAC_init(ctx_, nullptr, 0, nullptr) != 1 || EVP_MAC_update(ctx_, reinterpret_cast<const unsigned char*>(text.data()), text.size()) != 1 ||
        EVP_MAC_final(ctx_, digest, &n, sizeof digest) != 1 || n != sizeof digest)
      throw std::runtime_error("OpenSSL: HMAC-SHA256 failed");
  }

 private:
  std::string key_;
  EVP_MAC* mac_;
  EVP_MAC_CTX* ctx_ = nullptr;
};

std::string mac_of(const std::string& text, const std::string& token) {
  thread_local std::unique_ptr<Hmac> hmac;
  if (!hmac || hmac->key() != token) hmac = std::make_unique<Hmac>(token);
  unsigned char digest[32];
  hmac->sign(text, digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(32, '0');
  for (int i = 0; i < 16; ++i) hex[2 * i] = kHex[digest[i] >> 4], hex[2 * i + 1] = kHex[digest[i] & 15];
  return hex;
}

std::string signed_text(const std::string& text, const std::string& token) { return text + " " + mac_of(text, token); }

//! The words of a datagram whose MAC holds, nullopt otherwise.
std::optional<std::vector<std::string>> verified_words(const std::string& datagram, const std::string& token, const char* version) {
  if (datagram.size() > kLargestDatagram) return std::nullopt;
  const auto space = datagram.rfind(' ');
  if (space == std::string::npos) return std::nullopt;
  const std::string text = datagram.substr(0, space);
  if (!same_secret(datagram.substr(space + 1), mac_of(text, token))) return std::nullopt;
  std::vector<std::string> words;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    if (end > at) words.emplace_back(text, at, end - at);
    at = end + 1;
  }
  if (words.size() < 4 || words[1] != version) return std::nullopt;
  return words;
}

template <class T>
bool number(const std::string& word, T& out) {
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), out);
  return error == std::errc() && end == word.data() + word.size();
}

}  // namespace

std::string encode(const Heartbeat& h, const std::string& token) {
  std::ostringstream out;
  out << "ctwin-heartbeat 2 " << h.agent << ' ' << h.incarnation << ' ' << h.seq << ' ' << h.generation << ' ' << to_string(h.state) << ' ' << h.step << ' '
      << h.known_generation << ' ' << to_string(h.known_plan) << ' ' << h.known_cadence;
  return signed_text(out.str(), token);
}

std::string encode(const HeartbeatAnswer& a, const std::string& token) {
  std::ostringstream out;
  if (a.unknown) out << "ctwin-unknown 1 " << a.agent << ' ' << a.seq;
  else out << "ctwin-plan 1 " << a.agent << ' ' << a.seq << ' ' << a.generation << ' ' << to_string(a.plan);
  return signed_text(out.str(), token);
}

std::optional<Heartbeat> decode_heartbeat(const std::string& datagram, const std::string& token) {
  const auto words = verified_words(datagram, token, "2");
  if (!words || words->size() != 11 || (*words)[0] != "ctwin-heartbeat") return std::nullopt;
  Heartbeat h;
  h.agent = (*words)[2];
  const auto state = node_state_named((*words)[6]);
  const auto plan = plan_kind_named((*words)[9]);
  if (!state || !plan || !number((*words)[3], h.incarnation) || !number((*words)[4], h.seq) || !number((*words)[5], h.generation) ||
      !number((*words)[7], h.step) || !number((*words)[8], h.known_generation) || !number((*words)[10], h.known_cadence) || h.agent.size() > 64)
    return std::nullopt;
  h.state = *state;
  h.known_plan = *plan;
  return h;
}

std::optional<HeartbeatAnswer> decode_answer(const std::string& datagram, const std::string& token) {
  const auto words = verified_words(datagram, token, "1");
  if (!words) return std::nullopt;
  HeartbeatAnswer a;
  a.agent = (*words)[2];
  if (!number((*words)[3], a.seq)) return std::nullopt;
  if ((*words)[0] == "ctwin-unknown" && words->size() == 4) {
    a.unknown = true;
    return a;
  }
  if ((*words)[0] != "ctwin-plan" || words->size() != 6) return std::nullopt;
  const auto plan = plan_kind_named((*words)[5]);
  if (!plan || !number((*words)[4], a.generation)) return std::nullopt;
  a.plan = *plan;
  return a;
}

}  // namespace ctwin::live::cluster
