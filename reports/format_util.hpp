// Number and table formatting shared by the report tools, so compare and table print a time, a
// bandwidth or a percentage the same way.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fusebench::reports {

std::string format(const char* printf_format, double v);
// Microseconds with 4 significant digits below 1000 ("80.34", "394.7", "4.523"), whole above.
std::string format_us(double us);
std::string format_pct_change(double ratio);  // 1.102 -> "+10.2%"
// A percentage with one decimal, two significant digits below 1% ("103.6%", "0.041%").
std::string format_pct(double pct);
std::string format_optional(const std::optional<double>& v, const char* printf_format, const std::string& missing = "-");

using text_rows = std::vector<std::vector<std::string>>;
// Columns padded to their widest cell, two spaces apart; a dashed rule under the header.
std::string aligned_table(const std::vector<std::string>& header, const text_rows& rows);
// A GitHub-flavoured Markdown table; cells are escaped (|, newlines).
std::string markdown_table(const std::vector<std::string>& header, const text_rows& rows);
std::string markdown_escape(const std::string& s);
// RFC 4180: quoted when the field holds a comma, quote or newline.
std::string csv_field(const std::string& s);
std::string xml_escape(const std::string& s);

}  // namespace fusebench::reports
