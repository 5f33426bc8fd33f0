#include "tools/mstep/validate_suite.hpp"

#include "tools/mstep/launcher.hpp"

#include <cctype>
#include <chrono>
#include <thread>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mstep::cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string kind(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  return "null";
}

struct Reader {
  std::string file;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw SuiteError(fmt::format("{}: key '{}': {}", file, key, what));
  }
  // Every key of `obj` must be one of `known` ("note" is a free comment anywhere).
  void only(const json& obj, const std::string& path, std::initializer_list<const char*> known) const {
    for (const auto& [k, v] : obj.items()) {
      bool ok = k == "note";
      for (const char* name : known) ok = ok || k == name;
      if (!ok) fail(path.empty() ? k : path + "." + k, "unknown key");
    }
  }
  const json& need(const json& obj, const std::string& path, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(path.empty() ? key : path + "." + key, "missing");
    return *it;
  }
  const json& object(const json& v, const std::string& key) const {
    if (!v.is_object()) fail(key, fmt::format("expected an object, got {}", kind(v)));
    return v;
  }
  const json& array(const json& v, const std::string& key, bool non_empty) const {
    if (!v.is_array()) fail(key, fmt::format("expected an array, got {}", kind(v)));
    if (non_empty && v.empty()) fail(key, "must not be empty");
    return v;
  }
  std::string string(const json& v, const std::string& key) const {
    if (!v.is_string()) fail(key, fmt::format("expected a string, got {}", kind(v)));
    return v.get<std::string>();
  }
  // Labels and case names become file names: letters, digits, '.', '_' and '-' only.
  std::string label(const json& v, const std::string& key) const {
    std::string s = string(v, key);
    if (s.empty() || s.front() == '.') fail(key, "must not be empty or start with '.'");
    for (char c : s)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
        fail(key, fmt::format("'{}' may hold only letters, digits, '.', '_' and '-'", s));
    return s;
  }
  // Program arguments: strings, or integers written as numbers.
  std::vector<std::string> args(const json& v, const std::string& key) const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < array(v, key, false).size(); ++i) {
      const json& a = v[i];
      if (a.is_string()) out.push_back(a.get<std::string>());
      else if (a.is_number_integer()) out.push_back(a.dump());
      else fail(fmt::format("{}[{}]", key, i), fmt::format("expected a string or an integer, got {}", kind(a)));
    }
    return out;
  }
  std::vector<int> ranks(const json& v, const std::string& key) const {
    std::vector<int> out;
    for (std::size_t i = 0; i < array(v, key, true).size(); ++i) {
      const json& r = v[i];
      if (!r.is_number_integer() || r.get<long long>() < 1 || r.get<long long>() > 4096)
        fail(fmt::format("{}[{}]", key, i), "expected a rank count from 1 to 4096");
      out.push_back(r.get<int>());
    }
    return out;
  }
};

SuiteCase read_case(const Reader& r, const json& j, const std::string& path) {
  r.object(j, path);
  r.only(j, path, {"name", "program", "sizes", "length_arg"});
  SuiteCase c;
  c.name = r.label(r.need(j, path, "name"), path + ".name");
  c.program = r.string(r.need(j, path, "program"), path + ".program");
  if (c.program.empty()) r.fail(path + ".program", "must not be empty");
  const json& sizes = r.array(r.need(j, path, "sizes"), path + ".sizes", true);
  std::set<std::string> labels;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::string sp = fmt::format("{}.sizes[{}]", path, i);
    const json& s = r.object(sizes[i], sp);
    r.only(s, sp, {"label", "args", "ranks", "quick"});
    SuiteSize size;
    size.label = r.label(r.need(s, sp, "label"), sp + ".label");
    if (!labels.insert(size.label).second) r.fail(sp + ".label", fmt::format("'{}' appears twice", size.label));
    size.args = r.args(r.need(s, sp, "args"), sp + ".args");
    size.ranks = r.ranks(r.need(s, sp, "ranks"), sp + ".ranks");
    if (const auto q = s.find("quick"); q != s.end()) {
      if (!q->is_boolean()) r.fail(sp + ".quick", fmt::format("expected a boolean, got {}", kind(*q)));
      size.quick = q->get<bool>();
    }
    c.sizes.push_back(std::move(size));
  }
  if (const auto l = j.find("length_arg"); l != j.end()) {
    const std::string lp = path + ".length_arg";
    if (!l->is_number_unsigned()) r.fail(lp, fmt::format("expected an argument's index, got {}", kind(*l)));
    const auto index = l->get<std::size_t>();
    for (const SuiteSize& size : c.sizes) {
      const bool integral = index < size.args.size() && !size.args[index].empty() &&
                            size.args[index].find_first_not_of("0123456789") == std::string::npos &&
                            size.args[index].find_first_not_of('0') != std::string::npos;
      if (!integral)
        r.fail(lp, fmt::format("size '{}' has no positive integer argument {} to scale", size.label, index));
    }
    c.length_arg = index;
  }
  return c;
}

SuiteSMoved read_s_moved(const Reader& r, const json& j, const Suite& suite) {
  const std::string path = "s_moved";
  r.object(j, path);
  r.only(j, path, {"label", "env", "runs"});
  SuiteSMoved m;
  m.label = r.label(r.need(j, path, "label"), path + ".label");
  const json& env = r.object(r.need(j, path, "env"), path + ".env");
  if (env.empty()) r.fail(path + ".env", "must name at least one variable");
  for (const auto& [k, v] : env.items()) m.env[k] = r.string(v, path + ".env." + k);
  const json& runs = r.array(r.need(j, path, "runs"), path + ".runs", true);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string rp = fmt::format("{}.runs[{}]", path, i);
    const json& run = r.object(runs[i], rp);
    r.only(run, rp, {"case", "sizes"});
    const std::string name = r.string(r.need(run, rp, "case"), rp + ".case");
    const SuiteCase* c = suite.find(name);
    if (!c) r.fail(rp + ".case", fmt::format("no case '{}' in the suite", name));
    std::vector<std::string> sizes;
    if (const auto s = run.find("sizes"); s != run.end()) {
      for (std::size_t k = 0; k < r.array(*s, rp + ".sizes", true).size(); ++k) {
        const std::string key = fmt::format("{}.sizes[{}]", rp, k);
        std::string label = r.string((*s)[k], key);
        bool known = false;
        for (const auto& size : c->sizes) known = known || size.label == label;
        if (!known) r.fail(key, fmt::format("case '{}' has no size '{}'", name, label));
        sizes.push_back(std::move(label));
      }
    }
    m.runs.emplace_back(name, std::move(sizes));
  }
  return m;
}

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

}  // namespace

const SuiteCase* Suite::find(std::string_view name) const {
  for (const auto& c : cases)
    if (c.name == name) return &c;
  return nullptr;
}

Suite parse_suite(std::string_view text, const std::string& name) {
  const Reader r{name};
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    if (const auto p = what.find("] "); what.rfind("[json.exception", 0) == 0 && p != std::string::npos)
      what = what.substr(p + 2);
    throw SuiteError(fmt::format("{}: not valid JSON: {}", name, what));
  }
  if (!j.is_object()) throw SuiteError(fmt::format("{}: expected a JSON object, got {}", name, kind(j)));
  r.only(j, "", {"format", "version", "cases", "s_moved"});
  if (const auto f = j.find("format"); f != j.end() && r.string(*f, "format") != "mstep-validate-suite")
    r.fail("format", fmt::format("expected \"mstep-validate-suite\", got \"{}\"", f->get<std::string>()));
  if (const auto v = j.find("version"); v != j.end() && (!v->is_number_integer() || v->get<long long>() != 1))
    r.fail("version", "this mstep reads suite version 1");
  Suite suite;
  suite.path = name;
  const json& cases = r.array(r.need(j, "", "cases"), "cases", true);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string path = fmt::format("cases[{}]", i);
    SuiteCase c = read_case(r, cases[i], path);
    if (suite.find(c.name)) r.fail(path + ".name", fmt::format("case '{}' appears twice", c.name));
    suite.cases.push_back(std::move(c));
  }
  if (const auto m = j.find("s_moved"); m != j.end() && !m->is_null()) {
    suite.s_moved = read_s_moved(r, *m, suite);
    suite.has_s_moved = true;
  }
  return suite;
}

Suite read_suite(const fs::path& file) {
  std::ifstream in(file);
  std::error_code ec;
  if (!in || fs::is_directory(file, ec))
    throw SuiteError(fmt::format("cannot read suite {}: {}", file.string(),
                                 fs::is_directory(file, ec) ? "is a directory" : std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_suite(text.str(), file.string());
}

namespace {

constexpr int kQuickRanks = 2;

bool rank_selected(const RunFilter& f, int ranks) {
  if (!f.ranks.empty()) return std::find(f.ranks.begin(), f.ranks.end(), ranks) != f.ranks.end();
  return !f.quick || ranks == kQuickRanks;
}

bool case_selected(const RunFilter& f, const std::string& name) {
  return f.only.empty() || std::find(f.only.begin(), f.only.end(), name) != f.only.end();
}

}  // namespace

std::vector<Planned> plan_main(const Suite& suite, const RunFilter& f) {
  std::vector<Planned> out;
  for (const auto& c : suite.cases) {
    if (!case_selected(f, c.name)) continue;
    std::vector<const SuiteSize*> sizes;
    for (const auto& s : c.sizes)
      if (!f.quick || s.quick) sizes.push_back(&s);
    if (f.quick && sizes.empty()) {  // no size marked quick: the first one that runs at 2 ranks
      for (const auto& s : c.sizes)
        if (sizes.empty() && std::find(s.ranks.begin(), s.ranks.end(), kQuickRanks) != s.ranks.end())
          sizes.push_back(&s);
      if (sizes.empty()) sizes.push_back(&c.sizes.front());
    }
    for (const SuiteSize* s : sizes)
      for (int r : s->ranks)
        if (rank_selected(f, r)) out.push_back({&c, s, r});
  }
  return out;
}

std::vector<Planned> plan_s_moved(const Suite& suite, const RunFilter& f) {
  std::vector<Planned> out;
  if (!suite.has_s_moved) return out;
  for (const auto& [name, labels] : suite.s_moved.runs) {
    const SuiteCase* c = suite.find(name);
    if (!c || !case_selected(f, name)) continue;
    for (const auto& s : c->sizes) {
      if (!labels.empty() && std::find(labels.begin(), labels.end(), s.label) == labels.end()) continue;
      for (int r : s.ranks)
        if (rank_selected(f, r)) out.push_back({c, &s, r});
    }
  }
  return out;
}

fs::path self_exe() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  return n > 0 ? fs::path(std::string(self, static_cast<std::size_t>(n))) : fs::path("mstep");
}

std::string default_suite() {
  const fs::path installed = self_exe().parent_path().parent_path() / "share" / "mstep" / "validate" / "suite.json";
  std::error_code ec;
  return fs::exists(installed, ec) ? installed.string() : std::string(MSTEP_SOURCE_DIR "/share/validate/suite.json");
}

fs::path program_path(const std::string& program) {
  if (fs::path(program).is_absolute()) return program;
  return self_exe().parent_path().parent_path() / "examples" / program;
}

int run_logged(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const fs::path& log, double timeout_s, bool* timed_out) {
  if (timed_out) *timed_out = false;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) return 127;
  if (child == 0) {
    ::setpgid(0, 0);  // its own group: a hung job is ended whole, launcher and ranks
    // Out of validate's group, the step would outlive a validate killed outright (SIGKILL by a
    // harness's timeout): mstep record and calibrate end their job on this SIGTERM.
    end_with_parent(parent);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || out < 0) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "mstep: cannot run '%s': %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(child, child);  // also here, so that no signal can reach the group before it exists
  // Ctrl-C reaches only this process now that the job has a group of its own: validate notes it,
  // passes it on, and stops after this step.
  struct sigaction act {}, old_int {}, old_term {};
  act.sa_handler = on_interrupt;
  ::sigemptyset(&act.sa_mask);
  ::sigaction(SIGINT, &act, &old_int);
  ::sigaction(SIGTERM, &act, &old_term);
  const auto start = std::chrono::steady_clock::now();
  auto term_sent = start;
  bool passed_on = false, terminating = false;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child || (done < 0 && errno != EINTR)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto now = std::chrono::steady_clock::now();
    if (g_interrupted && !passed_on) {
      ::kill(-child, SIGINT);
      passed_on = true;
    }
    if (!terminating && timeout_s > 0 && now - start > std::chrono::duration<double>(timeout_s)) {
      if (timed_out) *timed_out = true;
      ::kill(-child, SIGTERM);
      terminating = true;
      term_sent = now;
    } else if (terminating && now - term_sent > std::chrono::seconds(5)) {
      ::kill(-child, SIGKILL);
    }
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool interrupted() { return g_interrupted != 0; }

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace mstep::cli
