// Shared by tests that run a command as a user would: its standard output and exit code.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace fusebench::test {

struct shell_result {
    int code = -1;       // exit code; -1 when the command did not exit normally
    std::string output;  // standard output (redirect stderr in the command to capture it)
};

inline shell_result run_shell(const std::string& cmd) {
    shell_result r;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    while (fgets(buf.data(), buf.size(), p)) r.output += buf.data();
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

}  // namespace fusebench::test
