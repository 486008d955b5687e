#include "Args.h"

#include "IR/Diagnostics.h"

#include "llvm/ADT/StringRef.h"

namespace kiln::cli {

char UsageError::ID = 0;

llvm::Error asUsageError(llvm::Error err) {
  return llvm::handleErrors(
      std::move(err), [](const DiagError &e) -> llvm::Error {
        return llvm::make_error<UsageError>(e.loc(), e.text());
      });
}

std::string ParsedArgs::get(const std::string &opt,
                            const std::string &fallback) const {
  auto it = values.find(opt);
  return it == values.end() || it->second.empty() ? fallback
                                                  : it->second.back();
}

const std::vector<std::string> &ParsedArgs::all(const std::string &opt) const {
  static const std::vector<std::string> none;
  auto it = values.find(opt);
  return it == values.end() ? none : it->second;
}

static const OptionSpec *findOption(const CommandSpec &cmd,
                                    llvm::StringRef name) {
  for (const OptionSpec &o : cmd.options)
    if (name == o.name || (o.shortName && name == o.shortName))
      return &o;
  return nullptr;
}

static std::string suggestOption(const CommandSpec &cmd, llvm::StringRef name) {
  const char *best = nullptr;
  unsigned bestDist = 3;
  for (const OptionSpec &o : cmd.options) {
    unsigned d = name.edit_distance(o.name, true, bestDist);
    if (d < bestDist) {
      bestDist = d;
      best = o.name;
    }
  }
  return best ? fmt::format("; did you mean '{}'?", best) : "";
}

llvm::Expected<ParsedArgs> parseArgs(const CommandSpec &cmd,
                                     const std::vector<std::string> &args) {
  ParsedArgs out;
  out.command = cmd.name;
  bool onlyPositional = false;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    if (onlyPositional || !a.startswith("-") || a == "-") {
      out.positional.push_back(a.str());
      continue;
    }
    if (a == "--") {
      onlyPositional = true;
      continue;
    }
    auto [name, inlineValue] = a.split('=');
    const OptionSpec *spec = findOption(cmd, name);
    if (!spec)
      return usageError("kiln {}: unknown option '{}'{} (see 'kiln {} "
                        "--help')",
                        cmd.name, name.str(), suggestOption(cmd, name),
                        cmd.name);
    std::vector<std::string> &slot = out.values[spec->name];
    if (!slot.empty() && !spec->repeatable)
      return usageError("kiln {}: option '{}' is given twice", cmd.name,
                        spec->name);
    if (!spec->metavar) {
      if (a.contains('='))
        return usageError("kiln {}: option '{}' takes no value", cmd.name,
                          spec->name);
      slot.push_back("");
      continue;
    }
    if (a.contains('=')) {
      slot.push_back(inlineValue.str());
    } else if (i + 1 < args.size()) {
      slot.push_back(args[++i]);
    } else {
      return usageError("kiln {}: option '{}' needs a value: {} {}", cmd.name,
                        spec->name, spec->name, spec->metavar);
    }
  }
  if (out.positional.size() < cmd.minPositional ||
      out.positional.size() > cmd.maxPositional)
    return usageError("kiln {}: expected {}; usage: {}", cmd.name,
                      cmd.minPositional == cmd.maxPositional
                          ? fmt::format("{} argument{}", cmd.minPositional,
                                        cmd.minPositional == 1 ? "" : "s")
                          : fmt::format("{} to {} arguments", cmd.minPositional,
                                        cmd.maxPositional),
                      cmd.usage);
  return out;
}

std::string helpText(const CommandSpec &cmd) {
  std::string out =
      fmt::format("usage: {}\n\n{}\n", cmd.usage, cmd.description);
  if (!cmd.options.empty())
    out += "\noptions:\n";
  for (const OptionSpec &o : cmd.options) {
    std::string names = o.shortName ? fmt::format("{}, {}", o.shortName, o.name)
                                    : std::string(o.name);
    std::string left =
        o.metavar ? fmt::format("{} {}", names, o.metavar) : names;
    out += fmt::format("  {:<28} {}{}\n", left, o.help,
                       o.repeatable ? " (repeatable)" : "");
  }
  out += fmt::format("  {:<28} {}\n", "--help", "show this help");
  return out;
}

} // namespace kiln::cli
