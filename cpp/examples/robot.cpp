// A robot's first drawings: a file to replay with the video, and (with a
// port) the same frames live to `underlay live --log udp://127.0.0.1:PORT`.
//     robot run.ulog [PORT]
#include <underlay/log.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace ul = underlay::log;

static double now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "run.ulog";
  auto file = ul::Writer::create(path);
  std::optional<ul::Writer> live;
  if (argc > 2) live.emplace(ul::Writer::udp("127.0.0.1", std::uint16_t(std::atoi(argv[2]))));
  for (ul::Writer* w : {&file, live ? &*live : nullptr}) {
    if (w) w->declare_entity("robots/blue/3", {"robots/blue"});
  }
  for (int k = 0; k < 50; ++k) {
    double t = now(), x = 100.0 * k;
    for (ul::Writer* w : {&file, live ? &*live : nullptr}) {
      if (!w) continue;
      w->instant(t).circle({x, 0}, 90).color(ul::named("blue")).fill(ul::named("blue")).entity("robots/blue/3");
      w->instant(t).line({x, 0}, {3000, 1000}).entity("plan").level(1);
      w->instant(t).text({x + 120, 120}, "cycle " + std::to_string(k), 14).entity("robots/blue/3").level(2);
      w->end_frame();
    }
    if (live) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (ul::Writer* w : {&file, live ? &*live : nullptr}) {
    if (!w) continue;
    if (ul::Status s = w->finish(); !s) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
  }
  std::printf("%s: 50 frames\n", path);
  return 0;
}
