// underlay/log.hpp: write underlay visualization logs from C++17.
//
// One header, no dependency: it writes the native format (docs/FORMAT.md,
// proto/underlay.proto) itself, byte for byte as underlay's Rust writer
// does for the same calls, to a file, over UDP (one whole log per
// datagram, for `underlay live --log udp://HOST:PORT`) or over TCP (the
// file format as a stream, for `--log tcp://HOST:PORT`). Files are
// uncompressed (underlay reads them so; `underlay log convert run.ulog
// run.ulog.zst` compresses one). Sockets are POSIX.
//
//     #include <underlay/log.hpp>
//     namespace ul = underlay::log;
//     auto w = ul::Writer::create("run.ulog");
//     w.declare_entity("robots/blue/3", {"robots/blue"});
//     w.instant(1700000000.25).circle({2271, -1136}, 90).color(ul::named("blue")).entity("robots/blue/3");
//     w.instant(1700000000.25).line({2271, -1136}, {1412, -568}).entity("plan").level(2);
//     if (auto s = w.finish(); !s) std::fprintf(stderr, "%s\n", s.message().c_str());
//
// A shape call returns a builder that is written into the open frame at
// the end of the statement. A frame stays open until another frame
// starts (`instant` with the open frame's time keeps adding to it),
// `end_frame`, `flush` or `finish`; each frame is one record, so a reader
// of a file whose writer died mid-frame loads every frame before it.
//
// What a reader would drop or refuse is not written (the rest is), and the
// first refusal is returned by the next `flush` or by `finish`, in the
// words of the Rust writer: a shape a reader cannot draw (NaN, infinite or
// negative sizes, ...), a frame at an unusable time or longer than a
// record may be, an empty entity name, a name or text that is not UTF-8,
// a parent edge that would make a cycle, a shape before any frame, a shape
// above the floor or in the picture's pixels without the option for it.
// Nothing throws.
//
// Licence: MIT OR Apache-2.0, as underlay.

#ifndef UNDERLAY_LOG_HPP
#define UNDERLAY_LOG_HPP

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace underlay {
namespace log {

/// A colour 0xRRGGBBAA (alpha 255 is opaque).
using Rgba = std::uint32_t;

/// A point on the floor (or in the picture's pixels).
struct Vec2 {
  double x = 0, y = 0;
};
/// A point in space: z up from the floor.
struct Vec3 {
  double x = 0, y = 0, z = 0;
};

enum class Marker { Cross, Dot };

/// The entity of primitives that name none.
inline constexpr const char* kDefaultEntity = "default";
/// Entity ids stay below this.
inline constexpr std::uint32_t kMaxEntityId = 1u << 20;
/// The longest record a reader takes.
inline constexpr std::uint64_t kMaxRecordLen = 64u << 20;
/// The largest payload of a UDP datagram (over IPv4).
inline constexpr std::size_t kMaxDatagram = 65507;

/// An opaque colour from 0xRRGGBB.
constexpr Rgba rgb(std::uint32_t rgb) { return ((rgb & 0xffffffu) << 8) | 0xffu; }
/// A colour from its four channels.
constexpr Rgba rgba(std::uint8_t r, std::uint8_t g, std::uint8_t b, std::uint8_t a) {
  return (std::uint32_t(r) << 24) | (std::uint32_t(g) << 16) | (std::uint32_t(b) << 8) | a;
}

/// A named colour (red, green, blue, yellow, orange, pink, magenta, purple,
/// cyan, white, black, gray, grey, brown; any case), as underlay's; opaque
/// white for any other name.
inline Rgba named(std::string_view name) {
  static const std::pair<const char*, std::uint32_t> table[] = {
      {"red", 0xff0000},    {"green", 0x00c000}, {"blue", 0x0040ff},   {"yellow", 0xffff00},
      {"orange", 0xff8000}, {"pink", 0xff60c0},  {"magenta", 0xff00ff}, {"purple", 0x8000c0},
      {"cyan", 0x00ffff},   {"white", 0xffffff}, {"black", 0x000000},  {"gray", 0x808080},
      {"grey", 0x808080},   {"brown", 0x8b4513}};
  for (const auto& [n, c] : table) {
    std::size_t len = std::strlen(n);
    if (len != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < len; ++i) {
      char a = name[i];
      if (a >= 'A' && a <= 'Z') a = char(a - 'A' + 'a');
      if (a != n[i]) same = false;
    }
    if (same) return rgb(c);
  }
  return 0xffffffffu;
}

/// Facts about the whole log (its first record).
struct Header {
  std::string name;
  /// Times are seconds since the start of the run (else since the Unix epoch).
  bool relative_time = false;
  std::string world_unit = "mm";
  std::optional<double> instant_threshold;
  std::optional<std::int32_t> default_max_level;
  /// The part of the world worth showing: (min, max) corners.
  std::optional<std::pair<Vec2, Vec2>> world_bounds;
};

/// How a Writer writes.
struct Options {
  /// The log holds shapes above the floor: format version 2.
  bool heights = false;
  /// The log holds shapes in the picture's pixels: format version 3.
  bool picture = false;
  /// Hand every finished frame to the operating system at once.
  bool flush_each_frame = false;
  /// Bytes buffered before they are written.
  std::size_t buffer_size = 1 << 16;
};

/// The outcome of flush and finish: ok, or the first refusal or error.
class Status {
 public:
  Status() = default;
  explicit Status(std::string message) : message_(std::move(message)), ok_(false) {}
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
  bool ok_ = true;
};

/// Where the bytes go.
class Sink {
 public:
  virtual ~Sink() = default;
  /// Writes all of `n` bytes; false (and `error` set) when it cannot.
  virtual bool write(const std::uint8_t* data, std::size_t n) = 0;
  virtual bool flush() { return true; }
  virtual bool close() { return true; }
  std::string error;
};

namespace detail {

inline std::string errno_text(int e) {
  std::string s = std::strerror(e);
  return s + " (os error " + std::to_string(e) + ")";
}

/// A file, written with stdio.
class FileSink final : public Sink {
 public:
  explicit FileSink(std::FILE* f) : f_(f) {}
  ~FileSink() override { close(); }
  bool write(const std::uint8_t* data, std::size_t n) override {
    if (f_ == nullptr) return fail(EBADF);
    if (n != 0 && std::fwrite(data, 1, n, f_) != n) return fail(errno);
    return true;
  }
  bool flush() override { return f_ == nullptr || std::fflush(f_) == 0 || fail(errno); }
  bool close() override {
    if (f_ == nullptr) return true;
    bool ok = std::fclose(f_) == 0;
    f_ = nullptr;
    return ok || fail(errno);
  }

 private:
  bool fail(int e) {
    error = errno_text(e);
    return false;
  }
  std::FILE* f_;
};

/// A connected socket: a datagram per write (UDP) or a stream (TCP).
class SocketSink final : public Sink {
 public:
  explicit SocketSink(int fd) : fd_(fd) {}
  ~SocketSink() override { close(); }
  bool write(const std::uint8_t* data, std::size_t n) override {
    while (n > 0) {
      ssize_t k = ::send(fd_, data, n, MSG_NOSIGNAL);
      if (k < 0) {
        if (errno == EINTR) continue;
        error = errno_text(errno);
        return false;
      }
      data += k;
      n -= std::size_t(k);
    }
    return true;
  }
  bool close() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return true;
  }

 private:
  int fd_;
};

inline int connect_socket(const std::string& host, std::uint16_t port, int type, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = type;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  int r = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (r != 0) {
    error = std::string("cannot resolve ") + host + ": " + ::gai_strerror(r);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    error = errno_text(errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  if (fd >= 0 && type == SOCK_STREAM) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

using Bytes = std::vector<std::uint8_t>;

inline void varint(Bytes& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(std::uint8_t(v | 0x80));
    v >>= 7;
  }
  out.push_back(std::uint8_t(v));
}
inline std::size_t varint_len(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
inline std::uint32_t zigzag32(std::int32_t v) {
  return (std::uint32_t(v) << 1) ^ std::uint32_t(v >> 31);
}
inline void key(Bytes& out, std::uint32_t field, std::uint32_t wire_type) { varint(out, (field << 3) | wire_type); }
inline std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}
inline void put64(Bytes& out, std::uint64_t b) {
  for (int i = 0; i < 8; ++i) out.push_back(std::uint8_t(b >> (8 * i)));
}
inline void put32(Bytes& out, std::uint32_t b) {
  for (int i = 0; i < 4; ++i) out.push_back(std::uint8_t(b >> (8 * i)));
}
/// A double field, left out when +0.0 (a -0.0 is written).
inline void dfield(Bytes& out, std::uint32_t field, double v) {
  if (bits(v) != 0) {
    key(out, field, 1);
    put64(out, bits(v));
  }
}
inline void lenfield(Bytes& out, std::uint32_t field, const std::uint8_t* body, std::size_t n) {
  key(out, field, 2);
  varint(out, n);
  out.insert(out.end(), body, body + n);
}
inline void lenfield(Bytes& out, std::uint32_t field, const Bytes& body) {
  lenfield(out, field, body.data(), body.size());
}
inline void strfield(Bytes& out, std::uint32_t field, std::string_view s) {
  if (!s.empty()) lenfield(out, field, reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}
inline void vec2(Bytes& out, std::uint32_t field, Vec2 v) {
  std::size_t n = (bits(v.x) != 0 ? 9 : 0) + (bits(v.y) != 0 ? 9 : 0);
  key(out, field, 2);
  out.push_back(std::uint8_t(n));
  dfield(out, 1, v.x);
  dfield(out, 2, v.y);
}
inline void vec3(Bytes& out, std::uint32_t field, Vec3 v) {
  std::size_t n = (bits(v.x) != 0 ? 9 : 0) + (bits(v.y) != 0 ? 9 : 0) + (bits(v.z) != 0 ? 9 : 0);
  key(out, field, 2);
  out.push_back(std::uint8_t(n));
  dfield(out, 1, v.x);
  dfield(out, 2, v.y);
  dfield(out, 3, v.z);
}
/// A delimited Record holding `body` as field `field`.
inline void record(Bytes& out, std::uint32_t field, const Bytes& body) {
  varint(out, 1 + varint_len(body.size()) + body.size());
  lenfield(out, field, body);
}
inline void entity_record(Bytes& out, std::uint32_t id, std::string_view name,
                          const std::vector<std::uint32_t>& parents) {
  Bytes body;
  if (id != 0) {
    key(body, 1, 0);
    varint(body, id);
  }
  strfield(body, 2, name);
  if (!parents.empty()) {
    Bytes packed;
    for (auto p : parents) varint(packed, p);
    lenfield(body, 3, packed);
  }
  record(out, 2, body);
}

/// Whether `s` is valid UTF-8 (no surrogates, no overlong forms).
inline bool utf8(std::string_view s) {
  std::size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t len;
    std::uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (std::size_t k = 1; k < len; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
      return false;
    i += len;
  }
  return true;
}

/// `x` as Rust's Display for f64 writes it: the shortest digits that read
/// back, in plain decimal notation (1e300 as 1 and 300 zeros, -0 as "-0").
inline std::string number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  std::string sign;
  if (!sci.empty() && sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  std::size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.') digits.push_back(c);
  long point = 1 + exp;  // digits d.ddd × 10^exp
  std::size_t lead = digits.find_first_not_of('0');
  if (lead == std::string::npos) return sign + "0";
  digits.erase(0, lead);
  point -= long(lead);
  digits.erase(digits.find_last_not_of('0') + 1);
  long len = long(digits.size());
  if (point <= 0) return sign + "0." + std::string(std::size_t(-point), '0') + digits;
  if (point >= len) return sign + digits + std::string(std::size_t(point - len), '0');
  return sign + digits.substr(0, std::size_t(point)) + "." + digits.substr(std::size_t(point));
}

/// `s` in double quotes, escaped as Rust's {:?} escapes ASCII.
inline std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\0': out += "\\0"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char b[16];
          std::snprintf(b, sizeof b, "\\u{%x}", unsigned(c));
          out += b;
        } else {
          out.push_back(ch);
        }
    }
  }
  return out + "\"";
}

inline bool finite(Vec2 v) { return std::isfinite(v.x) && std::isfinite(v.y); }

inline std::optional<std::string> point(const char* name, Vec2 v) {
  if (finite(v)) return std::nullopt;
  return std::string(name) + " (" + number(v.x) + ", " + number(v.y) + ") is not finite";
}
inline std::optional<std::string> size(const char* name, double s) {
  if (!std::isfinite(s)) return std::string(name) + " " + number(s) + " is not finite";
  if (s < 0.0) return std::string(name) + " " + number(s) + " is negative";
  return std::nullopt;
}

}  // namespace detail

class Writer;

/// One primitive being added: written into the open frame when it is
/// destroyed (at the end of the statement). Style it with the methods.
class Primitive {
 public:
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;
  Primitive(Primitive&&) = delete;
  Primitive& operator=(Primitive&&) = delete;
  inline ~Primitive();

  /// Outline colour (text and marker colour); default opaque white.
  Primitive& color(Rgba c) {
    color_ = c;
    return *this;
  }
  /// Fill colour of a closed shape.
  Primitive& fill(Rgba c) {
    fill_ = c;
    return *this;
  }
  /// Outline thickness in pixels of the video (0: the viewer's default).
  Primitive& thickness(float pixels) {
    thickness_ = pixels;
    world_ = false;
    return *this;
  }
  /// Outline thickness in world units (like paint on the floor).
  Primitive& world_thickness(float world) {
    thickness_ = world;
    world_ = true;
    return *this;
  }
  /// Measures thickness, text and marker sizes in world units.
  Primitive& world_units() {
    world_ = true;
    return *this;
  }
  /// The entity, declared on first use; an empty name is refused.
  inline Primitive& entity(std::string_view name);
  /// Level of detail: smaller is more important.
  Primitive& level(std::int32_t level) {
    level_ = level;
    return *this;
  }
  /// A floor shape in the picture's pixels (x right, y down from the
  /// top-left pixel's centre; sizes in pixels); needs Options::picture.
  Primitive& picture() {
    picture_ = true;
    return *this;
  }

 private:
  friend class Writer;
  Primitive(Writer* w, const char* kind, std::uint32_t field, detail::Bytes body, std::optional<std::string> why,
            bool raised)
      : w_(w), kind_(kind), field_(field), body_(std::move(body)), why_(std::move(why)), raised_(raised) {}

  Writer* w_;
  const char* kind_;
  std::uint32_t field_;
  detail::Bytes body_;
  std::optional<std::string> why_;
  bool raised_;
  Rgba color_ = 0xffffffffu;
  std::optional<Rgba> fill_;
  float thickness_ = 0.0f;
  bool world_ = false;
  std::int32_t level_ = 0;
  bool picture_ = false;
  std::optional<std::uint32_t> entity_;
  /// Why its entity cannot be used (empty name, not UTF-8).
  std::optional<std::string> entity_why_;
};

/// Writes a native log as a robot runs; see the top of this header.
class Writer {
 public:
  /// Creates (truncates) `path` and writes the prefix and header. When the
  /// file cannot be created, `ok()` is false and finish() says why.
  static Writer create(const std::string& path, const Header& header = Header(), const Options& options = Options()) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
      Writer w(nullptr, header, options, false, path);
      w.fail_io(detail::errno_text(errno));
      return w;
    }
    return Writer(std::make_unique<detail::FileSink>(f), header, options, false, path);
  }

  /// Sends each frame as one datagram to `underlay live --log
  /// udp://HOST:PORT`: every datagram is a whole log (prefix, header, the
  /// entities its primitives name with their ancestors, the frame). A
  /// frame must fit one datagram (65,507 bytes).
  static Writer udp(const std::string& host, std::uint16_t port, const Header& header = Header(),
                    const Options& options = Options()) {
    std::string error;
    int fd = detail::connect_socket(host, port, SOCK_DGRAM, error);
    if (fd < 0) {
      Writer w(nullptr, header, options, true, "<udp>");
      w.fail_io(error);
      return w;
    }
    return Writer(std::make_unique<detail::SocketSink>(fd), header, options, true, "<udp>");
  }

  /// Streams the file format to `underlay live --log tcp://HOST:PORT`,
  /// each frame sent as it ends.
  static Writer tcp(const std::string& host, std::uint16_t port, const Header& header = Header(),
                    Options options = Options()) {
    options.flush_each_frame = true;
    std::string error;
    int fd = detail::connect_socket(host, port, SOCK_STREAM, error);
    if (fd < 0) {
      Writer w(nullptr, header, options, false, "<tcp>");
      w.fail_io(error);
      return w;
    }
    return Writer(std::make_unique<detail::SocketSink>(fd), header, options, false, "<tcp>");
  }

  /// A writer on any sink; `name` is what errors name.
  Writer(std::unique_ptr<Sink> sink, const Header& header, const Options& options, bool datagrams = false,
         std::string name = "<stream>")
      : sink_(std::move(sink)), name_(std::move(name)), opts_(options), datagrams_(datagrams) {
    version_ = opts_.picture ? 3 : opts_.heights ? 2 : 1;
    detail::Bytes head;
    if (!detail::utf8(header.name) || !detail::utf8(header.world_unit)) {
      fail("the header's name and world unit must be valid UTF-8");
    }
    header_record(head, header);
    if (datagrams_) {
      datagram_header_ = std::move(head);
    } else {
      const std::uint8_t prefix[10] = {'U', 'N', 'D', 'E', 'R', 'L', 'A', 'Y', std::uint8_t(version_), 0};
      if (sink_ && !sink_->write(prefix, 10)) fail_io(sink_->error);
      out_ = std::move(head);
    }
    out_.reserve(std::min<std::size_t>(opts_.buffer_size, 1 << 24) + 4096);
  }

  Writer(Writer&&) = default;
  Writer& operator=(Writer&&) = default;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// Writes what was logged (errors are lost: call finish() to see them).
  ~Writer() {
    if (sink_) {
      end_frame();
      write_out(false);
      sink_->close();
    }
  }

  /// Whether nothing has gone wrong yet (the file could be created, ...).
  bool ok() const { return !error_ && !failed_; }

  /// Starts an instantaneous frame at `t` (seconds on the log's clock),
  /// ending the open frame, unless the open frame is at `t`.
  Writer& instant(double t) {
    std::uint64_t b = detail::bits(t);
    if (!(open_ && !open_persistent_ && open_a_ == b)) {
      end_frame();
      open_ = true;
      open_persistent_ = false;
      open_a_ = b;
    }
    return *this;
  }

  /// Starts a persistent frame shown over [start, end] (either may be
  /// infinite), unless the open frame has that span.
  Writer& persistent(double start, double end) {
    std::uint64_t a = detail::bits(start), b = detail::bits(end);
    if (!(open_ && open_persistent_ && open_a_ == a && open_b_ == b)) {
      end_frame();
      open_ = true;
      open_persistent_ = true;
      open_a_ = a;
      open_b_ = b;
    }
    return *this;
  }

  /// Ends the open frame (if any) and queues it as one record (sends it,
  /// over UDP).
  Writer& end_frame() {
    if (!open_) return *this;
    open_ = false;
    detail::Bytes time;
    double a, b;
    std::memcpy(&a, &open_a_, 8);
    std::memcpy(&b, &open_b_, 8);
    std::optional<std::string> problem;
    if (!open_persistent_) {
      detail::key(time, 1, 1);
      detail::put64(time, open_a_);
      if (!std::isfinite(a)) problem = "instantaneous time " + detail::number(a) + " is not finite";
    } else {
      detail::Bytes span;
      detail::dfield(span, 1, a);
      detail::dfield(span, 2, b);
      detail::lenfield(time, 2, span);
      if (std::isnan(a) || std::isnan(b))
        problem = "persistent time {" + detail::number(a) + "; " + detail::number(b) + "} is not a number";
      else if (b < a)
        problem = "persistent frame ends (" + detail::number(b) + ") before it starts (" + detail::number(a) + ")";
      else if (std::isinf(a) && a > 0)
        problem = "persistent frame {" + detail::number(a) + "; " + detail::number(b) + "} covers no time";
      else if (std::isinf(b) && b < 0)
        problem = "persistent frame {" + detail::number(a) + "; " + detail::number(b) + "} covers no time";
    }
    std::size_t frame_len = time.size() + frame_.size();
    std::size_t record_len = 1 + detail::varint_len(frame_len) + frame_len;
    if (!problem && record_len > kMaxRecordLen) {
      problem = "its record of " + std::to_string(record_len) + " bytes is longer than a reader takes (" +
                std::to_string(kMaxRecordLen) + " bytes)";
    }
    if (problem) {
      fail("a frame was not written: " + *problem);
      frame_.clear();
      used_.clear();
      return *this;
    }
    if (datagrams_) {
      send_datagram(time, record_len);
      return *this;
    }
    detail::varint(out_, record_len);
    detail::key(out_, 3, 2);
    detail::varint(out_, frame_len);
    out_.insert(out_.end(), time.begin(), time.end());
    out_.insert(out_.end(), frame_.begin(), frame_.end());
    frame_.clear();
    ++frames_;
    if (opts_.flush_each_frame) {
      write_out(true);
    } else if (out_.size() >= opts_.buffer_size) {
      write_out(false);
    }
    return *this;
  }

  /// Declares `name` with parent entities (declared too when new), for the
  /// entity graph; declaring again adds parents. An edge that would make a
  /// cycle is not written, nor a declaration with an empty name.
  Writer& declare_entity(std::string_view name, std::initializer_list<std::string_view> parents = {}) {
    return declare_entity(name, std::vector<std::string_view>(parents));
  }
  Writer& declare_entity(std::string_view name, const std::vector<std::string_view>& parents) {
    bool empty = name.empty(), bad = !detail::utf8(name);
    for (auto p : parents) {
      empty = empty || p.empty();
      bad = bad || !detail::utf8(p);
    }
    if (empty) {
      fail("declare_entity: an entity's name cannot be empty; nothing was declared");
      return *this;
    }
    if (bad) {
      fail("declare_entity: an entity's name is not valid UTF-8; nothing was declared");
      return *this;
    }
    std::vector<std::uint32_t> parent_ids;
    for (auto p : parents) parent_ids.push_back(intern(p));
    bool known = ids_.count(std::string(name)) != 0;
    std::uint32_t child = intern(name);
    bool added = false;
    for (auto p : parent_ids) {
      if (edges_.count(edge(child, p)) != 0) continue;
      if (reaches(p, child)) {
        fail("declare_entity: parent " + detail::quoted(names_[p]) + " of " + detail::quoted(name) +
             " would make a cycle");
      } else {
        edges_.insert(edge(child, p));
        parents_[child].push_back(p);
        added = true;
      }
    }
    if (added || !known) detail::entity_record(out_, child, name, parents_[child]);
    return *this;
  }

  /// Sets the entity of primitives that name none (initially "default").
  Writer& default_entity(std::string_view name) {
    if (name != default_name_) {
      default_name_ = std::string(name);
      default_entity_.reset();
    }
    return *this;
  }

  // Shapes on the floor (or, with .picture(), in the picture's pixels).

  /// A circle of `radius` around `center`.
  Primitive circle(Vec2 center, double radius) {
    detail::Bytes b = buffer();
    detail::vec2(b, 1, center);
    detail::dfield(b, 2, radius);
    std::optional<std::string> why;
    if (!(detail::finite(center) && std::isfinite(radius) && radius >= 0.0)) {
      why = detail::point("center", center);
      if (!why) why = detail::size("radius", radius);
    }
    return Primitive(this, "circle", 1, std::move(b), std::move(why), false);
  }
  /// A line segment.
  Primitive line(Vec2 start, Vec2 end) {
    detail::Bytes b = buffer();
    detail::vec2(b, 1, start);
    detail::vec2(b, 2, end);
    auto why = detail::point("start", start);
    if (!why) why = detail::point("end", end);
    return Primitive(this, "line", 2, std::move(b), std::move(why), false);
  }
  /// A rectangle size.x long along `orientation` (radians) and size.y wide.
  Primitive rectangle(Vec2 center, Vec2 size, double orientation = 0.0) {
    detail::Bytes b = buffer();
    detail::vec2(b, 1, center);
    detail::vec2(b, 2, size);
    detail::dfield(b, 3, orientation);
    auto why = detail::point("center", center);
    if (!why) why = detail::size("length", size.x);
    if (!why) why = detail::size("width", size.y);
    if (!why && !std::isfinite(orientation)) why = "orientation " + detail::number(orientation) + " is not finite";
    return Primitive(this, "rectangle", 3, std::move(b), std::move(why), false);
  }
  /// A closed polygon.
  Primitive polygon(const std::vector<Vec2>& vertices) { return polygon_(vertices, false); }
  Primitive polygon(std::initializer_list<Vec2> vertices) { return polygon_(std::vector<Vec2>(vertices), false); }
  /// An open polyline.
  Primitive polyline(const std::vector<Vec2>& vertices) { return polygon_(vertices, true); }
  Primitive polyline(std::initializer_list<Vec2> vertices) { return polygon_(std::vector<Vec2>(vertices), true); }
  /// Text anchored at the left end of its baseline, `size` pixels high.
  Primitive text(Vec2 anchor, std::string_view text, double size) {
    detail::Bytes b;
    detail::vec2(b, 1, anchor);
    detail::strfield(b, 2, text);
    detail::dfield(b, 3, size);
    auto why = detail::point("anchor", anchor);
    if (!why) why = detail::size("text size", size);
    if (!why && !detail::utf8(text)) why = std::string("its text is not valid UTF-8");
    return Primitive(this, "text", 5, std::move(b), std::move(why), false);
  }
  /// A point marker; `size` 0 is the viewer's default.
  Primitive point(Vec2 position, Marker kind = Marker::Cross, double size = 0.0) {
    detail::Bytes b;
    detail::vec2(b, 1, position);
    if (kind == Marker::Dot) b.insert(b.end(), {0x10, 0x01});
    detail::dfield(b, 3, size);
    auto why = detail::point("position", position);
    if (!why) why = detail::size("marker size", size);
    return Primitive(this, "point", 6, std::move(b), std::move(why), false);
  }
  /// The ring between radii `inner` and `outer` from angle `start` through
  /// `start + sweep` (radians, counter-clockwise when sweep > 0).
  Primitive sector(Vec2 center, double inner, double outer, double start, double sweep) {
    detail::Bytes b;
    detail::vec2(b, 1, center);
    detail::dfield(b, 2, inner);
    detail::dfield(b, 3, outer);
    detail::dfield(b, 4, start);
    detail::dfield(b, 5, sweep);
    auto why = detail::point("center", center);
    if (!why) why = detail::size("inner radius", inner);
    if (!why) why = detail::size("outer radius", outer);
    if (!why && inner > outer)
      why = "inner radius " + detail::number(inner) + " exceeds outer radius " + detail::number(outer);
    if (!why && !std::isfinite(start)) why = "start angle " + detail::number(start) + " is not finite";
    if (!why && !std::isfinite(sweep)) why = "sweep " + detail::number(sweep) + " is not finite";
    return Primitive(this, inner == outer ? "arc" : "sector", 7, std::move(b), std::move(why), false);
  }
  /// A circular arc: a sector with inner == outer == radius.
  Primitive arc(Vec2 center, double radius, double start, double sweep) {
    return sector(center, radius, radius, start, sweep);
  }

  // Shapes above the floor (need Options::heights or Options::picture).

  /// A line segment in space.
  Primitive line3(Vec3 start, Vec3 end) { return path3_({start, end}, true); }
  /// An open polyline through points in space.
  Primitive polyline3(const std::vector<Vec3>& points) { return path3_(points, true); }
  Primitive polyline3(std::initializer_list<Vec3> points) { return path3_(std::vector<Vec3>(points), true); }
  /// A closed polygon through points in space (it can be filled).
  Primitive polygon3(const std::vector<Vec3>& points) { return path3_(points, false); }
  Primitive polygon3(std::initializer_list<Vec3> points) { return path3_(std::vector<Vec3>(points), false); }
  /// A horizontal circle of `radius` around `center`, at its height.
  Primitive circle3(Vec3 center, double radius) { return circle3_facing(center, radius, Vec3{0, 0, 1}); }
  /// A circle in the plane through `center` whose normal is `normal`.
  Primitive circle3_facing(Vec3 center, double radius, Vec3 normal) {
    detail::Bytes b;
    detail::vec3(b, 1, center);
    detail::dfield(b, 2, radius);
    bool up = detail::bits(normal.x) == 0 && detail::bits(normal.y) == 0 && detail::bits(normal.z) == detail::bits(1.0);
    if (!up) detail::vec3(b, 3, normal);
    auto why = raised_why("circle", {center.x, center.y, center.z, radius, normal.x, normal.y, normal.z},
                          {false, false, false, true, false, false, false});
    if (!why && normal.x == 0.0 && normal.y == 0.0 && normal.z == 0.0)
      why = std::string("raised circle: a circle's normal has length 0");
    return Primitive(this, "circle", 15, std::move(b), std::move(why), true);
  }
  /// Text anchored at a point in space.
  Primitive text3(Vec3 anchor, std::string_view text, double size) {
    detail::Bytes b;
    detail::vec3(b, 1, anchor);
    detail::strfield(b, 2, text);
    detail::dfield(b, 3, size);
    auto why = raised_why("text", {anchor.x, anchor.y, anchor.z, size}, {false, false, false, true});
    if (!why && !detail::utf8(text)) why = std::string("its text is not valid UTF-8");
    return Primitive(this, "text", 16, std::move(b), std::move(why), true);
  }
  /// A point marker in space.
  Primitive point3(Vec3 position, Marker kind = Marker::Cross, double size = 0.0) {
    detail::Bytes b;
    detail::vec3(b, 1, position);
    if (kind == Marker::Dot) b.insert(b.end(), {0x10, 0x01});
    detail::dfield(b, 3, size);
    auto why = raised_why("point", {position.x, position.y, position.z, size}, {false, false, false, true});
    return Primitive(this, "point", 17, std::move(b), std::move(why), true);
  }
  /// A ball of `radius` around `center`.
  Primitive sphere(Vec3 center, double radius) {
    detail::Bytes b;
    detail::vec3(b, 1, center);
    detail::dfield(b, 2, radius);
    auto why = raised_why("sphere", {center.x, center.y, center.z, radius}, {false, false, false, true});
    return Primitive(this, "sphere", 18, std::move(b), std::move(why), true);
  }
  /// A vertical cylinder whose bottom face is centred on `base`.
  Primitive cylinder(Vec3 base, double radius, double height) {
    detail::Bytes b;
    detail::vec3(b, 1, base);
    detail::dfield(b, 2, radius);
    detail::dfield(b, 3, height);
    auto why = raised_why("cylinder", {base.x, base.y, base.z, radius, height}, {false, false, false, true, true});
    return Primitive(this, "cylinder", 19, std::move(b), std::move(why), true);
  }
  /// A box whose bottom face is centred on `base`: size.x long along
  /// `orientation`, size.y wide, size.z high.
  Primitive box3(Vec3 base, Vec3 size, double orientation = 0.0) {
    detail::Bytes b;
    detail::vec3(b, 1, base);
    detail::vec3(b, 2, size);
    detail::dfield(b, 3, orientation);
    auto why = raised_why("box", {base.x, base.y, base.z, size.x, size.y, size.z, orientation},
                          {false, false, false, true, true, true, false});
    return Primitive(this, "box", 20, std::move(b), std::move(why), true);
  }

  /// Frames and primitives written so far (with the open frame's primitives).
  std::pair<std::uint64_t, std::uint64_t> counts() const { return {frames_, primitives_}; }

  /// Writes every finished frame through (the open frame stays open) and
  /// returns the first refusal or error not yet returned.
  Status flush() {
    write_out(true);
    return take_error();
  }

  /// Ends the open frame, writes everything and closes the sink; returns
  /// the first refusal or error met while writing.
  Status finish() {
    end_frame();
    write_out(false);
    std::unique_ptr<Sink> sink = std::move(sink_);
    bool had_sink = sink != nullptr;
    if (error_) {
      if (sink) sink->close();
      return take_error();
    }
    if (failed_) {
      if (sink) sink->close();
      return Status(name_ + ": writing failed earlier (reported by flush); the log is incomplete");
    }
    if (!had_sink) return Status(name_ + ": the writer was already finished");
    if (!sink->flush() || !sink->close()) return Status(name_ + ": " + sink->error);
    return Status();
  }

 private:
  friend class Primitive;

  static std::uint64_t edge(std::uint32_t child, std::uint32_t parent) {
    return (std::uint64_t(child) << 32) | parent;
  }

  void header_record(detail::Bytes& out, const Header& h) {
    detail::Bytes body;
    detail::key(body, 1, 0);
    detail::varint(body, version_);
    detail::strfield(body, 2, h.name);
    if (h.relative_time) body.insert(body.end(), {0x18, 0x01});
    detail::lenfield(body, 4, reinterpret_cast<const std::uint8_t*>(h.world_unit.data()), h.world_unit.size());
    if (h.instant_threshold || h.default_max_level || h.world_bounds) {
      detail::Bytes hints;
      if (h.instant_threshold) {
        detail::key(hints, 1, 1);
        detail::put64(hints, detail::bits(*h.instant_threshold));
      }
      if (h.default_max_level) {
        detail::key(hints, 2, 0);
        detail::varint(hints, detail::zigzag32(*h.default_max_level));
      }
      if (h.world_bounds) {
        detail::Bytes bounds;
        detail::vec2(bounds, 1, h.world_bounds->first);
        detail::vec2(bounds, 2, h.world_bounds->second);
        detail::lenfield(hints, 3, bounds);
      }
      detail::lenfield(body, 5, hints);
    }
    detail::record(out, 1, body);
  }

  static std::optional<std::string> raised_why(const char* kind, std::initializer_list<double> numbers,
                                               std::initializer_list<bool> non_negative) {
    auto nn = non_negative.begin();
    for (double v : numbers) {
      bool must = nn != non_negative.end() && *nn++;
      if (!std::isfinite(v)) return std::string("raised ") + kind + ": a coordinate or size is not finite";
      if (must && v < 0.0) return std::string("raised ") + kind + ": a size is negative";
    }
    return std::nullopt;
  }

  Primitive polygon_(const std::vector<Vec2>& vertices, bool open) {
    detail::Bytes b;
    b.reserve(20 * vertices.size() + 2);
    for (const auto& v : vertices) detail::vec2(b, 1, v);
    if (open) b.insert(b.end(), {0x10, 0x01});
    std::optional<std::string> why;
    if (vertices.empty()) why = std::string("polygon has no vertices");
    for (std::size_t i = 0; !why && i < vertices.size(); ++i) {
      why = detail::point(("vertex " + std::to_string(i)).c_str(), vertices[i]);
    }
    return Primitive(this, "polygon", 4, std::move(b), std::move(why), false);
  }

  Primitive path3_(const std::vector<Vec3>& points, bool open) {
    detail::Bytes b;
    for (const auto& p : points) detail::vec3(b, 1, p);
    if (open) b.insert(b.end(), {0x10, 0x01});
    const char* kind = points.size() == 2 && open ? "line" : open ? "polyline" : "polygon";
    std::optional<std::string> why;
    for (const auto& p : points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
        why = std::string("raised ") + kind + ": a coordinate or size is not finite";
        break;
      }
    }
    if (!why && points.size() < 2) why = std::string("raised ") + kind + ": a path needs at least two points";
    return Primitive(this, kind, 14, std::move(b), std::move(why), true);
  }

  /// Whether `target` is `start` or one of its ancestors.
  bool reaches(std::uint32_t start, std::uint32_t target) const {
    std::vector<std::uint32_t> stack{start};
    std::unordered_set<std::uint32_t> seen{start};
    while (!stack.empty()) {
      std::uint32_t e = stack.back();
      stack.pop_back();
      if (e == target) return true;
      for (auto p : parents_[e])
        if (seen.insert(p).second) stack.push_back(p);
    }
    return false;
  }

  /// The id of `name`, declaring it with an entity record when new.
  std::uint32_t intern(std::string_view name) {
    auto it = ids_.find(std::string(name));
    if (it != ids_.end()) return it->second;
    std::uint32_t id = std::uint32_t(names_.size());
    ids_.emplace(std::string(name), id);
    names_.emplace_back(name);
    parents_.emplace_back();
    if (id >= kMaxEntityId) fail("more than " + std::to_string(kMaxEntityId) + " entities");
    detail::entity_record(out_, id, name, {});
    return id;
  }

  void fail(std::string message) {
    if (!error_) error_ = name_ + ": " + message;
  }
  void fail_io(const std::string& message) {
    failed_ = true;
    if (!error_) error_ = name_ + ": " + message;
  }
  Status take_error() {
    if (!error_) return Status();
    Status s(std::move(*error_));
    error_.reset();
    return s;
  }

  void commit(Primitive& p) {
    commit_(p);
    if (pool_.size() < 8) pool_.push_back(std::move(p.body_));
  }

  /// A cleared buffer for a shape's message, reused from committed ones.
  detail::Bytes buffer() {
    if (pool_.empty()) return detail::Bytes();
    detail::Bytes b = std::move(pool_.back());
    pool_.pop_back();
    b.clear();
    return b;
  }

  void commit_(Primitive& p) {
    std::uint32_t eid = 0;
    const std::optional<std::string>& entity_why_given = p.entity_why_;
    std::optional<std::string> entity_why;
    if (entity_why_given) entity_why = entity_why_given;
    if (p.entity_) {
      eid = *p.entity_;
    } else if (!entity_why) {
      if (default_entity_) {
        eid = *default_entity_;
      } else if (default_name_.empty()) {
        entity_why = "an entity's name cannot be empty";
      } else if (!detail::utf8(default_name_)) {
        entity_why = "its entity's name is not valid UTF-8";
      } else {
        default_entity_ = intern(default_name_);
        eid = *default_entity_;
      }
    }
    // "a circle", "an arc": the shape as a refusal names it.
    auto kind = [&p]() { return std::string(p.kind_[0] == 'a' ? "an " : "a ") + p.kind_; };
    if (!open_) {
      fail(kind() + " was added before any frame was started (call instant or persistent first)");
      return;
    }
    if (entity_why) {
      fail(kind() + " was not written: " + *entity_why);
      return;
    }
    if (p.picture_ && p.raised_) {
      fail(kind() + " was not written: a shape in the picture's pixels cannot have heights");
      return;
    }
    if (p.picture_ && !opts_.picture) {
      fail(kind() + " in the picture's pixels was not written: a log of format version " +
           (opts_.heights ? "2" : "1") +
           " cannot hold it; create the writer with Options::picture = true");
      return;
    }
    if (p.raised_ && !(opts_.heights || opts_.picture)) {
      fail(kind() +
           " above the floor was not written: a log without heights (format version 1) cannot hold it; create "
           "the writer with Options::heights = true");
      return;
    }
    std::optional<std::string>& why = p.why_;
    if (why && p.picture_) why = "in the picture: " + *why;
    double t = double(p.thickness_);
    if (!why && !std::isfinite(t)) why = "thickness " + detail::number(t) + " is not finite";
    if (!why && t < 0.0) why = "thickness " + detail::number(t) + " is negative";
    if (why) {
      fail(kind() + " was not written: " + *why);
      return;
    }
    // The primitive, as field 3 of the frame.
    std::size_t shape_key = detail::varint_len(p.field_ << 3);
    std::size_t body = shape_key + detail::varint_len(p.body_.size()) + p.body_.size();
    if (eid != 0) body += 1 + detail::varint_len(eid);
    if (p.level_ != 0) body += 1 + detail::varint_len(detail::zigzag32(p.level_));
    body += 5;
    if (p.fill_) body += 5;
    if (p.thickness_ != 0.0f) body += 5;
    if (p.world_) body += 2;
    if (p.picture_) body += 3;
    frame_.push_back(0x1a);
    detail::varint(frame_, body);
    detail::lenfield(frame_, p.field_, p.body_);
    if (eid != 0) {
      frame_.push_back(0x40);
      detail::varint(frame_, eid);
    }
    if (p.level_ != 0) {
      frame_.push_back(0x48);
      detail::varint(frame_, detail::zigzag32(p.level_));
    }
    frame_.push_back(0x55);
    detail::put32(frame_, p.color_);
    if (p.fill_) {
      frame_.push_back(0x5d);
      detail::put32(frame_, *p.fill_);
    }
    if (p.thickness_ != 0.0f) {
      std::uint32_t tb;
      std::memcpy(&tb, &p.thickness_, 4);
      frame_.push_back(0x65);
      detail::put32(frame_, tb);
    }
    if (p.world_) frame_.insert(frame_.end(), {0x68, 0x01});
    if (p.picture_) frame_.insert(frame_.end(), {0xa8, 0x01, 0x01});
    ++primitives_;
    if (datagrams_ && used_set_.insert(eid).second) used_.push_back(eid);
  }

  void send_datagram(const detail::Bytes& time, std::size_t record_len) {
    out_.clear();
    detail::Bytes d = {'U', 'N', 'D', 'E', 'R', 'L', 'A', 'Y', std::uint8_t(version_), 0};
    d.insert(d.end(), datagram_header_.begin(), datagram_header_.end());
    std::vector<bool> sent(names_.size(), false);
    std::vector<std::pair<std::uint32_t, bool>> stack;
    for (auto it = used_.rbegin(); it != used_.rend(); ++it) stack.emplace_back(*it, false);
    used_.clear();
    used_set_.clear();
    while (!stack.empty()) {
      auto [e, parents_done] = stack.back();
      stack.pop_back();
      if (e >= sent.size() || sent[e]) continue;
      if (!parents_done) {
        stack.emplace_back(e, true);
        const auto& ps = parents_[e];
        for (auto it = ps.rbegin(); it != ps.rend(); ++it) stack.emplace_back(*it, false);
        continue;
      }
      sent[e] = true;
      detail::entity_record(d, e, names_[e], parents_[e]);
    }
    detail::varint(d, record_len);
    detail::key(d, 3, 2);
    detail::varint(d, time.size() + frame_.size());
    d.insert(d.end(), time.begin(), time.end());
    d.insert(d.end(), frame_.begin(), frame_.end());
    frame_.clear();
    ++frames_;
    if (d.size() > kMaxDatagram) {
      fail("a frame of " + std::to_string(d.size()) + " bytes does not fit one UDP datagram (" +
           std::to_string(kMaxDatagram) + " bytes): it was not sent; send large frames over tcp://");
      return;
    }
    if (sink_ && !sink_->write(d.data(), d.size()) && !error_) error_ = name_ + ": " + sink_->error;
  }

  bool write_out(bool sync) {
    if (failed_ || datagrams_ || !sink_) {
      out_.clear();
      return false;
    }
    bool ok = sink_->write(out_.data(), out_.size()) && (!sync || sink_->flush());
    out_.clear();
    if (!ok) fail_io(sink_->error);
    return ok;
  }

  std::unique_ptr<Sink> sink_;
  std::string name_;
  Options opts_;
  bool datagrams_;
  int version_ = 1;
  detail::Bytes out_;
  detail::Bytes frame_;
  bool open_ = false;
  bool open_persistent_ = false;
  std::uint64_t open_a_ = 0, open_b_ = 0;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<std::string> names_;
  std::vector<std::vector<std::uint32_t>> parents_;
  std::unordered_set<std::uint64_t> edges_;
  std::optional<std::uint32_t> default_entity_;
  std::string default_name_ = kDefaultEntity;
  std::optional<std::string> error_;
  bool failed_ = false;
  std::uint64_t frames_ = 0, primitives_ = 0;
  detail::Bytes datagram_header_;
  std::vector<std::uint32_t> used_;
  std::unordered_set<std::uint32_t> used_set_;
  std::vector<detail::Bytes> pool_;
};

inline Primitive::~Primitive() { w_->commit(*this); }

inline Primitive& Primitive::entity(std::string_view name) {
  entity_why_.reset();
  entity_.reset();
  if (name.empty()) {
    entity_why_ = "an entity's name cannot be empty";
  } else if (!detail::utf8(name)) {
    entity_why_ = "its entity's name is not valid UTF-8";
  } else {
    entity_ = w_->intern(name);
  }
  return *this;
}

}  // namespace log
}  // namespace underlay

#endif  // UNDERLAY_LOG_HPP
