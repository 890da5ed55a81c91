#!/usr/bin/env python3
"""Validates generated JSON outputs against their schemas with the reference validator.

    validate_json_instances.py FILE.jsonl

Each line of FILE is a record {"model", "id", "tokens", "not_enforced": [...], "output_hex", "schema"}
written by grammar_sampling_test: output_hex is the output's exact bytes. Every output must be
strict UTF-8, parse as JSON (no NaN/Infinity, no duplicate keys, nothing after the value) and
validate against its schema.

The reference is the one of ../shared/jsonschema/README.md: Python jsonschema,
validators.validator_for(schema, default=Draft202012Validator), the draft the schema's $schema
names, and the Draft 2020-12 format checks applied in every draft. The format checks that differ
between jsonschema releases or depend on optional packages (rfc3339-validator, rfc3987, fqdn,
isoduration, jsonpointer) are written here as that README defines them, so Debian's
python3-jsonschema (4.10) and a newer pip one judge alike: date, date-time and time (RFC 3339;
`time` needs an offset), duration (ISO 8601), hostname (RFC 1123 labels), uri (a scheme, ':', then
no whitespace), uri-reference (no whitespace), json-pointer and relative-json-pointer (RFC 6901).
email, idn-email, ipv4, ipv6, uuid, regex and idn-hostname come from the installed jsonschema.

Documented engine gaps (core/grammar/json_schema.h): uniqueItems, oneOf exclusivity, the formats
regex, idn-hostname, iri, iri-reference, uri-template, and duplicate keys among additional
properties. An invalidity explained only by a gap the compiler reported for that schema (the
record's not_enforced list) is printed and counted apart; it does not fail the run. Any other
invalidity is printed in full and makes the exit status 1.
"""
import calendar
import json
import re
import sys

try:
    import jsonschema
    from jsonschema import validators
except ImportError:
    sys.exit("validate_json_instances.py: the Python jsonschema module is missing: install Debian's "
             "python3-jsonschema (apt-get install python3-jsonschema, or scripts/install-deps.sh)")

GAP_FORMATS = {"regex", "idn-hostname", "iri", "iri-reference", "uri-template"}

# --- formats as the README's reference defines them -------------------------------------------
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$", re.ASCII)
_TIME = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(\.\d+)?([zZ]|[+-](\d{2}):(\d{2}))$", re.ASCII)


def _valid_date(y, m, d):
    return 1 <= m <= 12 and 1 <= d <= calendar.monthrange(y, m)[1]


def is_date(s):
    if not isinstance(s, str):
        return True
    mo = _DATE.match(s)
    return bool(mo) and _valid_date(int(mo.group(1)), int(mo.group(2)), int(mo.group(3)))


def is_time(s):  # RFC 3339 full-time as rfc3339-validator reads it (seconds 00-59, an offset required)
    if not isinstance(s, str):
        return True
    mo = _TIME.match(s)
    if not mo:
        return False
    hh, mm, ss = int(mo.group(1)), int(mo.group(2)), int(mo.group(3))
    if hh > 23 or mm > 59 or ss > 59:
        return False
    if mo.group(6) is not None and (int(mo.group(6)) > 23 or int(mo.group(7)) > 59):
        return False
    return True


def is_date_time(s):
    if not isinstance(s, str):
        return True
    if len(s) < 11 or s[10] not in "tT":
        return False
    return is_date(s[:10]) and is_time(s[11:])


_DURATION = re.compile(r"^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$", re.ASCII)


def is_duration(s):
    return not isinstance(s, str) or bool(_DURATION.match(s))


_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$", re.ASCII)


def is_hostname(s):
    return not isinstance(s, str) or (s != "" and all(_LABEL.match(label) for label in s.split(".")))


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S*$")
_WS = re.compile(r"\s")


def is_uri(s):
    return not isinstance(s, str) or bool(_URI.match(s))


def is_uri_reference(s):
    return not isinstance(s, str) or not _WS.search(s)


_POINTER = re.compile(r"^(/([^~/]|~[01])*)*$", re.DOTALL)
_RELATIVE = re.compile(r"^(0|[1-9][0-9]*)(#|(/([^~/]|~[01])*)*)$", re.DOTALL)


def is_json_pointer(s):
    return not isinstance(s, str) or bool(_POINTER.match(s))


def is_relative_json_pointer(s):
    return not isinstance(s, str) or bool(_RELATIVE.match(s))


OWN = {
    "date": is_date, "date-time": is_date_time, "time": is_time, "duration": is_duration,
    "hostname": is_hostname, "uri": is_uri, "uri-reference": is_uri_reference,
    "json-pointer": is_json_pointer, "relative-json-pointer": is_relative_json_pointer,
}
FROM_LIBRARY = ["email", "idn-email", "ipv4", "ipv6", "uuid", "regex", "idn-hostname"]


def make_format_checker():
    base = getattr(jsonschema.Draft202012Validator, "FORMAT_CHECKER", None)
    if base is None:  # jsonschema < 4.5
        base = jsonschema.draft202012_format_checker
    checker = jsonschema.FormatChecker(formats=())
    missing = []
    for name in FROM_LIBRARY:
        if name in base.checkers:
            checker.checkers[name] = base.checkers[name]
        else:
            missing.append(name)
    for name, fn in OWN.items():
        checker.checks(name)(fn)
    return checker, missing


# --- parsing ----------------------------------------------------------------------------------
class DuplicateKey(ValueError):
    pass


def _pairs(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise DuplicateKey(k)
        seen[k] = v
    return seen


def _no_constant(name):
    raise ValueError("non-JSON number " + name)


def property_names(schema, acc):
    """Every name listed under some `properties` (or `required`) of the schema."""
    if isinstance(schema, dict):
        for key in ("properties",):
            if isinstance(schema.get(key), dict):
                acc.update(schema[key].keys())
        if isinstance(schema.get("required"), list):
            acc.update(x for x in schema["required"] if isinstance(x, str))
        for v in schema.values():
            property_names(v, acc)
    elif isinstance(schema, list):
        for v in schema:
            property_names(v, acc)
    return acc


# --- classifying errors -----------------------------------------------------------------------
def gap_keywords(not_enforced):
    gaps = set()
    for line in not_enforced:
        if "uniqueItems" in line:
            gaps.add("uniqueItems")
        if "oneOf exclusivity" in line:
            gaps.add("oneOf")
        mo = re.search(r"format '([^']*)' is not enforced", line)
        if mo:
            gaps.add("format:" + mo.group(1))
    return gaps


def explained_by_gap(error, gaps):
    """Whether `error` comes only from keywords the compiler reported as not enforced."""
    kw = error.validator
    if kw == "uniqueItems":
        return "uniqueItems" in gaps
    if kw == "format":
        return error.validator_value in GAP_FORMATS and ("format:" + str(error.validator_value)) in gaps
    if kw in ("anyOf", "oneOf"):
        if kw == "oneOf" and "is valid under each of" in error.message:
            return "oneOf" in gaps
        # No branch matched: a gap explains it if some branch failed only by gaps.
        branches = {}
        for sub in error.context or []:
            branches.setdefault(sub.relative_schema_path[0] if sub.relative_schema_path else None, []).append(sub)
        return any(all(explained_by_gap(e, gaps) for e in errs) for errs in branches.values())
    if kw == "allOf":
        return all(explained_by_gap(e, gaps) for e in (error.context or []))
    return False


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: validate_json_instances.py FILE.jsonl")
    checker, missing = make_format_checker()
    try:
        from importlib.metadata import version as _version
        version = _version("jsonschema")
    except Exception:
        version = getattr(jsonschema, "__version__", "?")
    print("validator: Python %s, jsonschema %s (%s)%s" % (
        sys.version.split()[0], version, jsonschema.__file__,
        "; formats not checkable with this install: " + ", ".join(missing) if missing else ""))
    checked = valid = gap_only = 0
    failures = []
    gap_cases = []
    unjudged = []
    with open(sys.argv[1], encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            rec = json.loads(line)
            checked += 1
            where = "%s %s (%d tokens)" % (rec["model"], rec["id"], rec["tokens"])
            raw = bytes.fromhex(rec["output_hex"])
            schema = rec["schema"]
            gaps = gap_keywords(rec.get("not_enforced", []))
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                failures.append("%s: not UTF-8 (%s)\n  output bytes: %r" % (where, e, raw))
                continue
            try:
                instance = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
            except DuplicateKey as e:
                key = e.args[0]
                if key not in property_names(schema, set()):
                    gap_only += 1
                    gap_cases.append("%s: duplicate additional key %r\n  output: %s" % (where, key, text))
                else:
                    failures.append("%s: duplicate key %r (a listed property)\n  output: %s" % (where, key, text))
                continue
            except ValueError as e:
                failures.append("%s: not JSON (%s)\n  output: %s" % (where, e, text))
                continue
            try:
                cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
                errors = list(cls(schema, format_checker=checker).iter_errors(instance))
            except Exception as e:  # a schema this jsonschema release cannot evaluate (4.10's RefResolver
                # fails on 2 of the shared schemas that 4.26 judges): not the output's fault
                unjudged.append("%s: the validator raised %s: %s\n  output: %s" % (where, type(e).__name__, e, text))
                continue
            if not errors:
                valid += 1
                continue
            desc = "\n".join("  - at %s: [%s] %s" % ("/" + "/".join(str(p) for p in e.absolute_path),
                                                     e.validator, e.message[:400]) for e in errors)
            if all(explained_by_gap(e, gaps) for e in errors):
                gap_only += 1
                gap_cases.append("%s: invalid only by a documented gap (%s)\n%s\n  output: %s" % (
                    where, ", ".join(sorted(gaps)), desc, text))
            else:
                failures.append("%s: INVALID\n%s\n  output: %s" % (where, desc, text))
    for g in gap_cases:
        print("GAP " + g)
    for u in unjudged:
        print("UNJUDGED " + u)
    for fl in failures:
        print("FAIL " + fl)
    print("validator: %d outputs checked, %d valid, %d invalid only by a documented engine gap, %d unjudged (the "
          "installed jsonschema cannot evaluate the schema), %d invalid" % (
              checked, valid, gap_only, len(unjudged), len(failures)))
    sys.exit(1 if failures or checked == 0 else 0)


if __name__ == "__main__":
    main()
