// A validator for the subset of JSON Schema (draft 2020-12) that fusebench's own schemas use:
// type (string or array), properties, required, additionalProperties (bool or schema), items,
// enum, const, minimum, maximum, minItems, anyOf, $ref to "#/$defs/<name>". Written here because
// the GPU image has no schema library and nothing can be installed there; keywords outside this
// subset are rejected when the schema is loaded, so a schema never silently checks less.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fusebench {

class json_schema {
public:
    // Throws std::invalid_argument when the schema uses an unsupported keyword.
    explicit json_schema(nlohmann::json schema);
    // Every violation as "path: message"; empty when valid.
    std::vector<std::string> validate(const nlohmann::json& instance) const;

private:
    void check_keywords(const nlohmann::json& s, const std::string& where) const;
    void validate_at(const nlohmann::json& s, const nlohmann::json& v, const std::string& path,
                     std::vector<std::string>& errors) const;
    nlohmann::json m_schema;
};

// Loads the schema file; throws std::runtime_error when it cannot be read or parsed.
json_schema load_json_schema(const std::string& path);

}  // namespace fusebench
