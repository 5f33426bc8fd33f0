// mstep report --format html: one self-contained page, checked in a real browser (Debian's
// Chromium, headless): the DOM Blink builds from it has a row per rank and a tick per M-step, the
// console stays silent, and a screenshot lands in the build directory (build/report-html.png).
#include "harness.hpp"

using namespace mstep_it;

namespace {

const std::string kChromium = "/usr/bin/chromium";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Chromium's headless run of `args` on a file: its DOM (--dump-dom) or screenshot, with the
// page's console messages in stderr (INFO:CONSOLE lines).
Result chromium(const fs::path& page, std::vector<std::string> args) {
  std::vector<std::string> argv{kChromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                "--enable-logging=stderr", "--v=0",
                                "--user-data-dir=" + (test_dir() / "chromium-profile").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("file://" + fs::absolute(page).string());
  return run(argv, {{"HOME", test_dir().string()}}, {}, 120);
}

bool console_spoke(const Result& r) { return r.err.find(":CONSOLE") != std::string::npos; }

}  // namespace

TEST_CASE("report --format html: the shipped ring's page, rendered by headless Chromium", "[html]") {
  INFO("Chromium is needed: bash .ci/install-deps installs it");
  REQUIRE(fs::exists(kChromium));
  const fs::path dir = test_dir() / "ring";
  check_recorded(record(dir, 2, {std::string(EXAMPLES_DIR) + "/ring", "60", "4096"}), 2);
  write_model_params(dir / "params.json");
  const fs::path page = test_dir() / "report.html";
  const Env env = no_default_params(test_dir());
  const Result r = run({kMstep, "report", dir.string(), "--format", "html", "-o", page.string()}, env);
  REQUIRE(r.code == 0);
  CHECK(r.err == "mstep: wrote " + page.string() + "\n");
  CHECK(r.out.empty());
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Self-contained: nothing to fetch, no script.
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));
  CHECK(html.find("https://") == std::string::npos);
  long long steps = 0;
  const Stats st = stats(dir);
  for (const json& rank : st.j.at("per_rank")) steps += rank.at("steps").get<long long>();
  REQUIRE(steps >= 60);
  CHECK(count(html, "class=\"rank-row\"") == 2);
  CHECK(count(html, "class=\"mstep-end\"") == static_cast<std::size_t>(steps));
  CHECK(count(html, "class=\"predicted-end\"") == 2);
  CHECK(count(html, "<tr class=\"model\">") == 5);
  CHECK(count(html, "<tr class=\"rank\">") == 2);
  CHECK(html.find("main (ring.c:") != std::string::npos);  // a wait hotspot at its line
  CHECK(html.find("Below each rank, top to bottom: the run as LogGPS predicts it") != std::string::npos);

  // The browser's DOM: every row and tick became an element, and the console said nothing.
  const Result dom = chromium(page, {"--dump-dom"});
  REQUIRE(dom.code == 0);
  CHECK(count(dom.out, "class=\"rank-row\"") == 2);
  CHECK(count(dom.out, "class=\"mstep-end\"") == static_cast<std::size_t>(steps));
  CHECK_FALSE(console_spoke(dom));
  const fs::path png = fs::path(kMstep).parent_path().parent_path() / "report-html.png";
  fs::remove(png);
  const Result shot = chromium(page, {"--window-size=1200,1000", "--screenshot=" + png.string()});
  CHECK(shot.code == 0);
  CHECK_FALSE(console_spoke(shot));
  REQUIRE(fs::exists(png));
  CHECK(fs::file_size(png) > 20000);

  // The console check hears a page that does speak.
  const fs::path noisy = test_dir() / "noisy.html";
  std::ofstream(noisy) << "<!DOCTYPE html><html><body><script>console.error('x')</script></body></html>\n";
  CHECK(console_spoke(chromium(noisy, {"--dump-dom"})));
}

TEST_CASE("report --format html at 1024 ranks: 8 ranks a row, a small page that says so", "[html]") {
  const fs::path dir = test_dir() / "halo";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "1024", "--events", "200000", "--pattern", "halo2d"}).code == 0);
  write_model_params(dir / "params.json");
  const Result r = run({kMstep, "report", dir.string(), "--format", "html"}, no_default_params(test_dir()));
  REQUIRE(r.code == 0);
  CHECK(count(r.out, "class=\"rank-row\"") == 128);
  CHECK(r.out.find("each row sums 8 ranks") != std::string::npos);
  CHECK(r.out.find("ranks 1016-1023") != std::string::npos);
  CHECK(count(r.out, "<tr class=\"rank\">") == 64);
  CHECK(r.out.find("The 64 of 1024 ranks LogGPS misses by the most time") != std::string::npos);
  CHECK(r.out.size() < 4'000'000);
}

TEST_CASE("report --format html: bad output paths and options fail in one line", "[html]") {
  const fs::path dir = test_dir() / "ring";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "3", "--events", "300"}).code == 0);
  const Env env = no_default_params(test_dir());
  const Result bad = run({kMstep, "report", dir.string(), "--format", "html", "-o", "/nonexistent/r.html"}, env);
  check_one_line_error(bad, 1);
  CHECK(bad.err == "mstep: cannot write /nonexistent/r.html\n");
  check_one_line_error(run({kMstep, "report", dir.string(), "--format", "json", "-o", "r.json"}, env), 2);
  // Without parameters the page still draws the run, and says what is missing.
  const Result plain = run({kMstep, "report", dir.string(), "--format", "html"}, env);
  CHECK(plain.code == 0);
  CHECK(count(plain.out, "class=\"rank-row\"") == 3);
  CHECK(plain.out.find("no parameters") != std::string::npos);
}

TEST_CASE("whatif --format html: both predictions below every rank, the change named, rendered by Chromium", "[html]") {
  INFO("Chromium is needed: bash .ci/install-deps installs it");
  REQUIRE(fs::exists(kChromium));
  const fs::path work = test_dir();
  const fs::path dir = work / "random";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "4", "--events", "2000", "--pattern", "random"}).code == 0);
  write_model_params(dir / "params.json");
  const fs::path page = work / "whatif.html";
  const Env env = no_default_params(work);
  const Result r = run({kMstep, "whatif", dir.string(), "--set", "L=20us", "--format", "html", "-o", page.string()}, env);
  REQUIRE(r.code == 0);
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(html.find("<li class=\"change\">L 200 ns -&gt; 20 us</li>") != std::string::npos);
  CHECK(count(html, "<tr class=\"model\">") == 5);
  CHECK(count(html, "class=\"rank-row\"") == 4);
  CHECK(count(html, "class=\"predicted-end\"") == 2 * 4);  // baseline and what-if, per rank
  CHECK(html.find("the run as LogGPS, baseline predicts it; the run as LogGPS, what-if predicts it") != std::string::npos);
  const Result dom = chromium(page, {"--dump-dom"});
  REQUIRE(dom.code == 0);
  CHECK(count(dom.out, "class=\"predicted-end\"") == 2 * 4);
  CHECK_FALSE(console_spoke(dom));
  check_one_line_error(run({kMstep, "whatif", dir.string(), "--set", "L=1us", "-o", "x.html"}, env), 2);
}
