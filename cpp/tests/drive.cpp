// Runs a writer script through the C++ header: the C++ third of "one
// script, three writers, one file" (tests/it/sdk.rs drives underlay's Rust
// writer and python/tests/drive.py the Python package through the same
// script, and requires the same bytes and the same words).
//
//     drive SCRIPT        (files are written in the current folder)
//
// The script's grammar is in python/tests/drive.py and tests/it/sdk.rs.

#include <underlay/log.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ul = underlay::log;

namespace {

std::uint64_t hex(const std::string& t) { return std::stoull(t.substr(1), nullptr, 16); }

double f(const std::string& t) {
  std::uint64_t b = hex(t);
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

float g(const std::string& t) {
  std::uint32_t b = std::uint32_t(hex(t));
  float v;
  std::memcpy(&v, &b, 4);
  return v;
}

std::string s(const std::string& t) {
  std::string out;
  std::size_t from = 1, count = 1;
  if (t[0] == 'r') {  // r<count>.<hex>: the bytes repeated
    from = t.find('.') + 1;
    count = std::stoul(t.substr(1, from - 2));
  }
  for (std::size_t i = from; i + 1 < t.size(); i += 2) out.push_back(char(std::stoi(t.substr(i, 2), nullptr, 16)));
  std::string one = out;
  out.reserve(one.size() * count);
  for (std::size_t k = 1; k < count; ++k) out += one;
  return out;
}

ul::Header header(const std::vector<std::string>& t, std::size_t i) {
  ul::Header h;
  h.name = s(t.at(i));
  h.relative_time = t.at(i + 1) == "1";
  h.world_unit = s(t.at(i + 2));
  if (t.at(i + 3) != "-") h.instant_threshold = f(t[i + 3]);
  if (t.at(i + 4) != "-") h.default_max_level = std::int32_t(std::stol(t[i + 4]));
  if (t.at(i + 5) != "-") h.world_bounds = {{f(t[i + 5]), f(t[i + 6])}, {f(t[i + 7]), f(t[i + 8])}};
  return h;
}

ul::Vec2 v2(const std::vector<std::string>& a, std::size_t i) { return {f(a.at(i)), f(a.at(i + 1))}; }
ul::Vec3 v3(const std::vector<std::string>& a, std::size_t i) { return {f(a.at(i)), f(a.at(i + 1)), f(a.at(i + 2))}; }

void style(ul::Primitive& p, const std::vector<std::string>& t) {
  if (t[1] != "-") p.color(ul::Rgba(std::stoul(t[1])));
  if (t[2] != "-") p.fill(ul::Rgba(std::stoul(t[2])));
  float thick = g(t[3]);
  std::uint32_t bits;
  std::memcpy(&bits, &thick, 4);
  if (bits != 0) p.thickness(thick);
  if (t[4] == "1") p.world_units();
  if (t[5] != "-") p.entity(s(t[5]));
  std::int32_t level = std::int32_t(std::stol(t[6]));
  if (level != 0) p.level(level);
  if (t[7] == "1") p.picture();
}

void primitive(ul::Writer& w, const std::vector<std::string>& t) {
  const std::string& kind = t.at(8);
  std::vector<std::string> a(t.begin() + 9, t.end());
  auto n = [&]() { return std::size_t(std::stoul(a.at(0))); };
  if (kind == "circle") {
    auto p = w.circle(v2(a, 0), f(a.at(2)));
    style(p, t);
  } else if (kind == "line") {
    auto p = w.line(v2(a, 0), v2(a, 2));
    style(p, t);
  } else if (kind == "rect") {
    auto p = w.rectangle(v2(a, 0), v2(a, 2), f(a.at(4)));
    style(p, t);
  } else if (kind == "polygon" || kind == "polyline") {
    std::vector<ul::Vec2> vs;
    for (std::size_t i = 0; i < n(); ++i) vs.push_back(v2(a, 1 + 2 * i));
    auto p = kind == "polygon" ? w.polygon(vs) : w.polyline(vs);
    style(p, t);
  } else if (kind == "text") {
    auto p = w.text(v2(a, 0), s(a.at(2)), f(a.at(3)));
    style(p, t);
  } else if (kind == "point") {
    auto p = w.point(v2(a, 0), a.at(2) == "1" ? ul::Marker::Dot : ul::Marker::Cross, f(a.at(3)));
    style(p, t);
  } else if (kind == "sector") {
    auto p = w.sector(v2(a, 0), f(a.at(2)), f(a.at(3)), f(a.at(4)), f(a.at(5)));
    style(p, t);
  } else if (kind == "arc") {
    auto p = w.arc(v2(a, 0), f(a.at(2)), f(a.at(3)), f(a.at(4)));
    style(p, t);
  } else if (kind == "line3") {
    auto p = w.line3(v3(a, 0), v3(a, 3));
    style(p, t);
  } else if (kind == "polyline3" || kind == "polygon3") {
    std::vector<ul::Vec3> ps;
    for (std::size_t i = 0; i < n(); ++i) ps.push_back(v3(a, 1 + 3 * i));
    auto p = kind == "polyline3" ? w.polyline3(ps) : w.polygon3(ps);
    style(p, t);
  } else if (kind == "circle3") {
    if (a.at(4) == "-") {
      auto p = w.circle3(v3(a, 0), f(a.at(3)));
      style(p, t);
    } else {
      auto p = w.circle3_facing(v3(a, 0), f(a.at(3)), v3(a, 4));
      style(p, t);
    }
  } else if (kind == "text3") {
    auto p = w.text3(v3(a, 0), s(a.at(3)), f(a.at(4)));
    style(p, t);
  } else if (kind == "point3") {
    auto p = w.point3(v3(a, 0), a.at(3) == "1" ? ul::Marker::Dot : ul::Marker::Cross, f(a.at(4)));
    style(p, t);
  } else if (kind == "sphere") {
    auto p = w.sphere(v3(a, 0), f(a.at(3)));
    style(p, t);
  } else if (kind == "cylinder") {
    auto p = w.cylinder(v3(a, 0), f(a.at(3)), f(a.at(4)));
    style(p, t);
  } else if (kind == "box3") {
    auto p = w.box3(v3(a, 0), v3(a, 3), f(a.at(6)));
    style(p, t);
  } else {
    throw std::runtime_error("unknown shape " + kind);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: drive SCRIPT\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::optional<ul::Writer> w;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> t;
    std::size_t from = 0;
    while (true) {
      std::size_t sp = line.find(' ', from);
      t.push_back(line.substr(from, sp - from));
      if (sp == std::string::npos) break;
      from = sp + 1;
    }
    const std::string& cmd = t[0];
    if (cmd == "open" || cmd == "udp" || cmd == "tcp") {
      ul::Options o;
      o.heights = t.at(2) == "1";
      o.picture = t.at(3) == "1";
      ul::Header h = header(t, 4);
      w.reset();
      if (cmd == "open") {
        w.emplace(ul::Writer::create(t[1], h, o));
      } else {
        auto port = std::uint16_t(std::stoul(t[1]));
        w.emplace(cmd == "udp" ? ul::Writer::udp("127.0.0.1", port, h, o) : ul::Writer::tcp("127.0.0.1", port, h, o));
      }
    } else if (cmd == "prim") {
      primitive(*w, t);
    } else if (cmd == "instant") {
      w->instant(f(t.at(1)));
    } else if (cmd == "persistent") {
      w->persistent(f(t.at(1)), f(t.at(2)));
    } else if (cmd == "end") {
      w->end_frame();
    } else if (cmd == "entity") {
      std::vector<std::string> parents(t.begin() + 2, t.end());
      for (auto& p : parents) p = s(p);
      std::vector<std::string_view> views(parents.begin(), parents.end());
      w->declare_entity(s(t.at(1)), views);
    } else if (cmd == "default") {
      w->default_entity(s(t.at(1)));
    } else if (cmd == "pause") {
      std::this_thread::sleep_for(std::chrono::microseconds(std::stol(t.at(1))));
    } else if (cmd == "flush" || cmd == "finish") {
      ul::Status st = cmd == "flush" ? w->flush() : w->finish();
      if (st)
        std::cout << cmd << " ok\n";
      else
        std::cout << cmd << " error: " << st.message() << "\n";
    } else {
      std::fprintf(stderr, "unknown command %s\n", cmd.c_str());
      return 2;
    }
  }
  std::cout.flush();
  return 0;
}
