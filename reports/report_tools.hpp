// Command-line entry of the report tools; suites/main.cpp hands `compare`, `table` and `merge` here
// before the harness CLI sees them (they read reports and never touch a GPU).
//
//   fusebench compare BASE.json NEW.json [--policy P] [--threshold F] [--all]
//                     [--markdown PATH] [--json PATH] [--junit PATH]
//   fusebench table   REPORT.json [REPORT.json ...] [--labels L1,L2,...] [--suite S,...] [--dtype T,...]
//                     [--markdown PATH] [--csv DIR]
//   fusebench merge   OUT.json IN.json [IN.json ...] [--force] [--overwrite]
//
// Exit codes: 0 done and no regression; 1 compare found a regression (CORRECTNESS REGRESSION or
// SLOWER); 2 bad usage or input (one line on stderr, no output file written or changed);
// 4 an output file could not be written.
#pragma once

#include <string>

namespace fusebench::reports {

bool is_report_command(const std::string& command);

// argv[1] is the command.
int run_report_command(int argc, char** argv);

}  // namespace fusebench::reports
