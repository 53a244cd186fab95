#include "store/remote/redis/cluster_map.h"

#include <array>
#include <bitset>
#include <charconv>

namespace nvrtc_cache::store::remote::redis {
namespace {

// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as the cluster specification gives it.
std::uint16_t crc16(std::string_view bytes) {
  std::uint16_t crc = 0;
  for (unsigned char byte : bytes) {
    crc ^= static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit)
      crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  return crc;
}

template <typename T>
bool parse_number(std::string_view text, T max, T* out) {
  if (text.empty()) return false;
  unsigned long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > max) return false;
  *out = static_cast<T>(value);
  return true;
}

// "host:port", "[v6]:port" or "v6:port" (the last colon separates the port).
bool split_address(std::string_view text, std::string* host, std::uint16_t* port) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view name = text.substr(0, colon);
  if (name.size() >= 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
  host->assign(name);
  return parse_number<std::uint16_t>(text.substr(colon + 1), 65535, port) && *port != 0;
}

// The next space-separated word of *line (consumed); empty at the end.
std::string_view next_word(std::string_view* line) {
  const auto start = line->find_first_not_of(' ');
  if (start == std::string_view::npos) {
    *line = {};
    return {};
  }
  *line = line->substr(start);
  const auto end = line->find(' ');
  const std::string_view word = line->substr(0, end);
  *line = end == std::string_view::npos ? std::string_view() : line->substr(end);
  return word;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  for (std::string_view word = next_word(&line); !word.empty(); word = next_word(&line)) out.push_back(word);
  return out;
}

}  // namespace

std::uint16_t key_slot(std::string_view key) {
  if (const auto open = key.find('{'); open != std::string_view::npos) {
    const auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return crc16(key) & (kClusterSlots - 1);
}

std::optional<std::vector<ClusterNode>> parse_cluster_nodes(std::string_view text, const std::string& answering_host) {
  if (text.size() > kMaxClusterNodesReply) return std::nullopt;
  std::vector<ClusterNode> nodes;
  std::size_t slots_listed = 0;  // over every node: a slot has one owner, so at most kClusterSlots
  std::bitset<kClusterSlots> listed;
  std::size_t migrations = 0;  // "[slot->-id]" entries, at most one per slot
  while (!text.empty()) {
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (nodes.size() == kMaxClusterNodes) return std::nullopt;
    std::array<std::string_view, 8> w;
    for (std::string_view& word : w) word = next_word(&line);
    if (w[7].empty()) return std::nullopt;
    ClusterNode node;
    std::string_view address = w[1].substr(0, w[1].find('@'));  // drop @cport[,hostname]
    if (!split_address(address, &node.host, &node.port)) {
      if (address.empty() || address.front() != ':') return std::nullopt;
      node.failed = true;  // noaddr (":0")
    }
    if (node.host.empty()) node.host = answering_host;
    const std::string_view flags = w[2];
    node.master = flags.find("master") != std::string_view::npos;
    node.id = w[0];
    if (!node.master && w[3] != "-") node.master_id = w[3];
    if (flags.find("fail") != std::string_view::npos || flags.find("noaddr") != std::string_view::npos ||
        flags.find("handshake") != std::string_view::npos) {
      node.failed = true;
    }
    for (std::string_view range = next_word(&line); !range.empty(); range = next_word(&line)) {
      if (range.front() == '[') {  // a migration in progress: ASK covers it
        if (++migrations > kClusterSlots) return std::nullopt;
        continue;
      }
      const auto dash = range.find('-');
      std::uint16_t first = 0, last = 0;
      if (!parse_number<std::uint16_t>(range.substr(0, dash), kClusterSlots - 1, &first)) return std::nullopt;
      last = first;
      if (dash != std::string_view::npos &&
          (!parse_number<std::uint16_t>(range.substr(dash + 1), kClusterSlots - 1, &last) || last < first)) {
        return std::nullopt;
      }
      // A slot has one owner: one listed twice is not one cluster's map. The count bounds the
      // marking (and apply()'s work) by the number of slots, however many ranges are repeated.
      slots_listed += static_cast<std::size_t>(last - first) + 1;
      if (slots_listed > kClusterSlots) return std::nullopt;
      for (std::size_t slot = first; slot <= last; ++slot) {
        if (listed.test(slot)) return std::nullopt;
        listed.set(slot);
      }
      node.slots.emplace_back(first, last);
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::optional<Redirect> parse_redirect(std::string_view error) {
  const std::vector<std::string_view> w = words(error);
  if (w.size() != 3 || (w[0] != "MOVED" && w[0] != "ASK")) return std::nullopt;
  Redirect redirect;
  redirect.moved = w[0] == "MOVED";
  if (!parse_number<std::uint16_t>(w[1], kClusterSlots - 1, &redirect.slot)) return std::nullopt;
  if (!split_address(w[2], &redirect.host, &redirect.port))
    return std::nullopt;  // host may be empty: the answering node's
  return redirect;
}

}  // namespace nvrtc_cache::store::remote::redis
