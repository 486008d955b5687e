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

/// Help lines fit a terminal of this many columns.
constexpr size_t kHelpWidth = 80;
/// Where an option's help starts: after two spaces and its names.
constexpr size_t kHelpColumn = 2 + 28 + 1;

/// `text`'s words filled greedily into lines of at most kHelpWidth columns
/// (a longer word stands alone): the first line continues a line whose
/// first `used` columns are taken, the others start with `indent` spaces.
/// With `brackets`, the spaces inside [...] do not split (a usage line's
/// `[--bind NAME=SIZE]...` stays whole).
static std::string fill(llvm::StringRef text, size_t used, size_t indent,
                        bool brackets = false) {
  std::vector<std::string> words;
  int depth = 0;
  for (llvm::StringRef rest = text.trim(); !rest.empty();) {
    auto [word, next] = rest.split(' ');
    if (brackets && depth > 0 && !words.empty())
      words.back() += " " + word.str();
    else if (!word.empty())
      words.push_back(word.str());
    if (brackets)
      depth +=
          static_cast<int>(word.count('[')) - static_cast<int>(word.count(']'));
    rest = next;
  }
  std::string out;
  size_t col = used;
  for (const std::string &w : words) {
    const bool first = &w == &words.front();
    if (!first && col + 1 + w.size() > kHelpWidth) {
      out += "\n" + std::string(indent, ' ');
      col = indent;
    } else if (!first) {
      out += ' ';
      ++col;
    }
    out += w;
    col += w.size();
  }
  return out;
}

std::string helpText(const CommandSpec &cmd) {
  // A usage line too long for one line goes on under the command's first
  // argument ("usage: kiln plan " is 17 columns); one written on several
  // lines (kiln cache's) stays as written.
  llvm::StringRef usage = cmd.usage;
  const std::string prefix = fmt::format("kiln {} ", cmd.name);
  const size_t under = 7 + (usage.startswith(prefix) ? prefix.size() : 0);
  std::string out = fmt::format(
      "usage: {}\n\n{}\n",
      usage.contains('\n') ? usage.str() : fill(usage, 7, under, true),
      cmd.description);
  if (!cmd.options.empty())
    out += "\noptions:\n";
  auto option = [&](const std::string &left, const std::string &help) {
    std::string line = fmt::format("  {:<28} ", left);
    return line + fill(help, line.size(), kHelpColumn) + "\n";
  };
  for (const OptionSpec &o : cmd.options) {
    std::string names = o.shortName ? fmt::format("{}, {}", o.shortName, o.name)
                                    : std::string(o.name);
    std::string left =
        o.metavar ? fmt::format("{} {}", names, o.metavar) : names;
    out += option(left,
                  std::string(o.help) + (o.repeatable ? " (repeatable)" : ""));
  }
  out += option("--help", "show this help");
  return out;
}

} // namespace kiln::cli
