// The commit a report names on a copy of the tree without git (the GPU machine): it comes from
// .fusebench-commit, and a stamp that was not made from these files must not label them clean.
#include "support/shell.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace {

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("a stamp labels only the files it was made from", "[stamp]") {
    using fusebench::test::run_shell;
    const std::string src = FUSEBENCH_SOURCE_DIR;
    if (run_shell("git -C '" + src + "' rev-parse HEAD >/dev/null 2>&1").code != 0) SKIP("the source tree is not a git checkout");
    const auto dir = std::filesystem::temp_directory_path() / ("fusebench-stamp-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string d = dir.string();
    // A copy of the tracked files without .git, as the GPU machine gets it, and a stamp for them.
    REQUIRE(run_shell("cd '" + src + "' && git ls-files | tar -cf - -T - | tar -xf - -C '" + d + "'").code == 0);
    REQUIRE(run_shell("FUSEBENCH_STAMP_OUT='" + d + "/.fusebench-commit' bash '" + src + "/scripts/stamp-commit.sh'").code == 0);
    const std::string stamp = slurp(dir / ".fusebench-commit");
    const std::string commit = stamp.substr(0, stamp.find('\n'));
    const bool stamped_dirty = stamp.find("\ntrue\n") == commit.size();
    const std::string build_info = "cmake -DSOURCE_DIR='" + d + "' -DOUTPUT='" + d + "/build_info.hpp' -P '" + src +
                                   "/cmake/build_info.cmake' 2>&1";

    auto r = run_shell(build_info);
    REQUIRE(r.code == 0);
    std::string info = slurp(dir / "build_info.hpp");
    CHECK_THAT(info, Catch::Matchers::ContainsSubstring("git_commit = \"" + commit + "\""));
    CHECK_THAT(info, Catch::Matchers::ContainsSubstring(stamped_dirty ? "git_dirty = true" : "git_dirty = false"));
    CHECK_THAT(r.output, !Catch::Matchers::ContainsSubstring("not those"));

    // One tracked file changes after stamping: same commit, but dirty, and the build says why.
    { std::ofstream(dir / "README.md", std::ios::app) << "\nedited after the stamp\n"; }
    r = run_shell(build_info);
    REQUIRE(r.code == 0);
    info = slurp(dir / "build_info.hpp");
    CHECK_THAT(info, Catch::Matchers::ContainsSubstring("git_commit = \"" + commit + "\""));
    CHECK_THAT(info, Catch::Matchers::ContainsSubstring("git_dirty = true"));
    CHECK_THAT(r.output, Catch::Matchers::ContainsSubstring("not those .fusebench-commit was made from"));
    std::filesystem::remove_all(dir);
}
