// Text formatting helpers with Python's behaviour: HTML escaping (markupsafe.escape), printf-style
// `str % args`, and datetime.strftime in the C locale. Internal to core/jinja; pure functions,
// safe from any thread.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/jinja/value.h"
#include "core/util/status.h"

namespace radixserve::jinja {

// & < > " ' -> &amp; &lt; &gt; &#34; &#39;
std::string HtmlEscape(std::string_view s);

// fmt % args: %s %r %a %d %i %u %f %F %e %E %g %G %x %X %o %c %% with flags, width and
// precision, and %(key)s with a dict. args: a tuple supplies several values, anything else one.
// Fails (kResourceExhausted) when the result would exceed max_bytes.
Result<Value> PercentFormat(std::string_view fmt, const Value& args, size_t max_bytes);

// datetime.strftime(fmt) for the UTC calendar time of `t` (a naive datetime: %Z and %z are
// empty). Supports glibc's directives and its -, _ and 0 padding flags; unknown ones are copied.
std::string Strftime(std::string_view fmt, std::chrono::system_clock::time_point t);

}  // namespace radixserve::jinja
