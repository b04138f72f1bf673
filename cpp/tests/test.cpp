// Tests of underlay/log.hpp, run by scripts/test-cpp-sdk.sh with g++ and
// clang++ at -Wall -Wextra -Werror, under AddressSanitizer and
// UndefinedBehaviorSanitizer. (That the bytes are the Rust writer's is
// tests/it/sdk.rs's job.) `underlay_log_test bench N FILE` times N circles.
#include <underlay/log.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

namespace ul = underlay::log;

static int failures = 0;
#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                    \
    }                                                                \
  } while (0)

static std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

static void words() {
  CHECK(ul::detail::number(1e300) == "1" + std::string(300, '0'));
  CHECK(ul::detail::number(-0.0) == "-0");
  CHECK(ul::detail::number(0.1) == "0.1");
  CHECK(ul::detail::number(1e-7) == "0.0000001");
  CHECK(ul::detail::number(std::nan("")) == "NaN");
  CHECK(ul::detail::number(-INFINITY) == "-inf");
  CHECK(ul::detail::number(double(0.1f)) == "0.10000000149011612");
  CHECK(ul::detail::quoted("a\"b\\\n\x1b\x7f\xc3\xa9") == "\"a\\\"b\\\\\\n\\u{1b}\\u{7f}\xc3\xa9\"");
  CHECK(ul::detail::utf8("ok \xe6\x97\xa5"));
  CHECK(!ul::detail::utf8("\xed\xa0\x80"));  // a surrogate
  CHECK(!ul::detail::utf8("\xc0\xaf"));      // overlong
  CHECK(!ul::detail::utf8("\xe6\x97"));      // cut short
}

static void file_and_refusals(const std::string& dir) {
  std::string path = dir + "/t.ulog";
  auto w = ul::Writer::create(path);
  CHECK(w.ok());
  w.declare_entity("robots/blue/3", {"robots/blue", "attack"});
  w.persistent(-INFINITY, INFINITY).line({0, 0}, {1, 0}).color(ul::named("red")).entity("obstacle");
  w.instant(2).circle({1, 2}, 3).color(ul::named("GREEN")).entity("robots/blue/3").level(2);
  w.instant(2).circle({1, 2}, -1);
  w.instant(2).sphere({0, 0, 1}, 1);
  CHECK(w.counts().second == 2);
  ul::Status s = w.flush();
  CHECK(!s && s.message() == path + ": a circle was not written: radius -1 is negative");
  w.declare_entity("attack", {"robots/blue/3"});
  w.instant(NAN).circle({0, 0}, 1);
  w.instant(3).text({0, 0}, "\xff", 12);
  s = w.finish();
  CHECK(!s && s.message() == path + ": declare_entity: parent \"robots/blue/3\" of \"attack\" would make a cycle");
  std::string bytes = slurp(path);
  CHECK(bytes.substr(0, 10) == std::string("UNDERLAY\x01\x00", 10));
  CHECK(bytes.size() > 100);
  CHECK(w.finish().message() == path + ": the writer was already finished");

  auto bad = ul::Writer::create(dir + "/no/such/folder/x.ulog");
  CHECK(!bad.ok());
  CHECK(bad.finish().message().find("No such file or directory") != std::string::npos);

  auto v3 = ul::Writer::create(dir + "/p.ulog", ul::Header(), ul::Options{true, true, false, 1 << 16});
  v3.instant(1).rectangle({320, 240}, {40, 20}).picture().entity("boxes");
  v3.instant(1).sphere({0, 0, 1}, 1).picture();
  CHECK(v3.finish().message() == dir + "/p.ulog: a sphere was not written: a shape in the picture's pixels cannot have heights");
  CHECK(slurp(dir + "/p.ulog")[8] == 3);
}

static void udp() {
  int rx = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(::bind(rx, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(rx, reinterpret_cast<sockaddr*>(&a), &len);
  auto w = ul::Writer::udp("127.0.0.1", ntohs(a.sin_port));
  w.declare_entity("robots/blue/3", {"robots/blue"});
  w.instant(1).circle({0, 0}, 90).entity("robots/blue/3");
  w.instant(2).line({0, 0}, {1, 1}).entity("plan");
  CHECK(w.finish().ok());
  char buf[70000];
  ssize_t n = ::recv(rx, buf, sizeof buf, 0);
  std::string d(buf, std::size_t(n > 0 ? n : 0));
  CHECK(d.substr(0, 10) == std::string("UNDERLAY\x01\x00", 10));
  // The entity and its parent, parent first, then the frame.
  CHECK(d.find("robots/blue") < d.find("robots/blue/3"));
  n = ::recv(rx, buf, sizeof buf, 0);
  CHECK(std::string(buf, std::size_t(n > 0 ? n : 0)).find("plan") != std::string::npos);
  ::close(rx);

  auto big = ul::Writer::udp("127.0.0.1", ntohs(a.sin_port));
  std::vector<ul::Vec2> points(5000, ul::Vec2{1.5, 2.5});
  big.instant(1).polyline(points);
  big.end_frame();
  CHECK(big.flush().message().find("does not fit one UDP datagram") != std::string::npos);
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "bench") {
    long n = std::atol(argv[2]);
    auto t0 = std::chrono::steady_clock::now();
    auto w = ul::Writer::create(argv[3]);
    for (long i = 0; i < n; ++i) {
      if (i % 100 == 0) w.instant(double(i) * 0.01);
      w.circle({double(i), 0.5 * double(i)}, 90.0);
    }
    ul::Status s = w.finish();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%ld circles in %.3f s%s\n", n, secs, s ? "" : (" " + s.message()).c_str());
    return s ? 0 : 1;
  }
  std::string dir = argc > 1 ? argv[1] : "/tmp";
  words();
  file_and_refusals(dir);
  udp();
  if (failures == 0) std::printf("underlay_log_test: all passed\n");
  return failures == 0 ? 0 : 1;
}
