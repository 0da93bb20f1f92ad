"""The options a read-only command line may give each program: the allow-list behind
`_readonly.readonly_command`.

Each program is an `Options`: the exact options it may take (no abbreviation: GNU tools
accept ``--outp`` for ``--output``, so only whole names are known), which of them take a
value, how many operands it may have, and whether it is *tail-safe*: no argument it
could be given at run time (by ``xargs``, a glob, an expansion) makes it write or run
anything. An option missing from a table is refused, never guessed.

Spec strings list options separated by spaces: ``-x`` and ``--long`` take no value,
``-x=`` and ``--long=`` take one (``-x V``, ``-xV``, ``--long V``, ``--long=V``),
``--long=?`` takes an optional value that can only be attached (``--color``,
``--color=auto``), and ``--long=2`` takes the next two words (``jq --arg name value``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import attrs


@attrs.frozen
class Options:
    """What one program may be given (see the module docstring)."""

    flags: frozenset[str] = frozenset()
    valued: Mapping[str, int] = attrs.field(factory=dict)
    optional: frozenset[str] = frozenset()
    operands: int | None = None
    operand: Callable[[str], bool] | None = None
    numeric: bool = False  # -5 is an option (head -5) or an operand (seq -1 5)
    any_words: bool = False  # every word is data (echo, printf, test)
    tail_safe: bool = True
    #: options end at the first operand (xargs: the rest is the command it runs)
    stop_at_operand: bool = False
    #: the first operand is a script that must pass this check (sed)
    script: Callable[[str], bool] | None = None


def spec(text: str, **kw: object) -> Options:
    flags: set[str] = set()
    valued: dict[str, int] = {}
    optional: set[str] = set()
    for token in text.split():
        name, eq, arity = token.partition("=")
        if not eq:
            flags.add(name)
        elif arity == "?":
            optional.add(name)
        else:
            valued[name] = int(arity) if arity else 1
    return Options(frozenset(flags), valued, frozenset(optional), **kw)  # type: ignore[arg-type]


_HEAD = ("-c= -n= -q -v -z --bytes= --lines= --quiet --silent --verbose --zero-terminated")
_GREP = (
    "-E -F -G -P -e= -f= -i -y --no-ignore-case -v -w -x -c --color=? --colour=? -L -l -m= "
    "-o -q -s -b -H -h --label= -n -T -Z --null -A= -B= -C= -a -I -D= -d= --exclude= "
    "--exclude-from= --exclude-dir= --include= -r -R -U -z --line-buffered "
    "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp= --file= "
    "--ignore-case --invert-match --word-regexp --line-regexp --count --files-without-match "
    "--files-with-matches --max-count= --only-matching --quiet --silent --no-messages "
    "--byte-offset --with-filename --no-filename --line-number --initial-tab "
    "--after-context= --before-context= --context= --text --binary-files= --devices= "
    "--directories= --recursive --dereference-recursive --binary --null-data")
_RG = (
    "-a --text -c --count --count-matches --color= --colors= --column --no-column -C= "
    "--context= -A= --after-context= -B= --before-context= --context-separator= "
    "--no-context-separator -b --byte-offset --crlf --no-crlf -E= --encoding= -e= "
    "--regexp= -f= --file= --files --files-with-matches -l --files-without-match "
    "--fixed-strings -F --no-fixed-strings -L --follow --no-follow -g= --glob= --iglob= "
    "--glob-case-insensitive --heading --no-heading --hidden --no-hidden -. -i "
    "--ignore-case -S --smart-case -s --case-sensitive --ignore-file= -v --invert-match "
    "--json --no-json --line-buffered -n --line-number -N --no-line-number -x "
    "--line-regexp -M= --max-columns= --max-columns-preview -m= --max-count= -d= "
    "--max-depth= --maxdepth= --max-filesize= --mmap --no-mmap -U --multiline "
    "--no-multiline --multiline-dotall --no-config --no-ignore --no-ignore-dot "
    "--no-ignore-exclude --no-ignore-files --no-ignore-global --no-ignore-parent "
    "--no-ignore-vcs --no-messages --no-require-git --no-unicode --null -0 --null-data "
    "--one-file-system -o --only-matching --passthru --passthrough -P --pcre2 --no-pcre2 "
    "--pretty -p -q --quiet -r= --replace= --sort= --sortr= --stats --trim --no-trim -t= "
    "--type= -T= --type-not= --type-list -u --unrestricted --vimgrep -H --with-filename -I "
    "--no-filename -w --word-regexp --engine= --binary --no-binary -j= --threads= "
    "--field-match-separator= --field-context-separator= --path-separator= "
    "--sort-files --no-sort-files --block-buffered --no-block-buffered")
_LS = (
    "-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q -r -R -s "
    "-S -t -u -U -v -w= -x -X -Z -1 -T= -I= --all --almost-all --author --escape "
    "--block-size= --ignore-backups --color=? --directory --dired --classify=? --file-type "
    "--format= --full-time --group-directories-first --no-group --human-readable --si "
    "--dereference-command-line --dereference-command-line-symlink-to-dir --hide= "
    "--hyperlink=? --indicator-style= --inode --ignore= --kibibytes --dereference "
    "--numeric-uid-gid --literal --hide-control-chars --show-control-chars --quote-name "
    "--quoting-style= --reverse --recursive --size --sort= --time= --time-style= --tabsize= "
    "--width= --context --zero")
_DIFF = (
    "-i --ignore-case --ignore-file-name-case --no-ignore-file-name-case -E "
    "--ignore-tab-expansion -Z --ignore-trailing-space -b --ignore-space-change -w "
    "--ignore-all-space -B --ignore-blank-lines -I= --ignore-matching-lines= -a --text "
    "--strip-trailing-cr -r --recursive -N --new-file --unidirectional-new-file -q --brief "
    "-s --report-identical-files -c -C= --context=? -u -U= --unified=? -e --ed -n --rcs "
    "-y --side-by-side -W= --width= --left-column --suppress-common-lines -p "
    "--show-c-function -F= --show-function-line= --label= --expand-tabs -t --initial-tab "
    "-T --tabsize= --suppress-blank-empty -l --paginate -d --minimal --horizon-lines= "
    "--speed-large-files -x= --exclude= -X= --exclude-from= -S= --starting-file= "
    "--from-file= --to-file= --no-dereference --color=? --normal --palette=")
_SUMS = ("-b -c -t -z --binary --check --tag --text --zero --ignore-missing --quiet "
         "--status --strict -w --warn")

#: programs that read and print, with the options a read-only line may give them
PROGRAMS: dict[str, Options] = {
    "cat": spec("-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends "
                "--number --squeeze-blank --show-tabs --show-nonprinting"),
    "head": spec(_HEAD, numeric=True),
    "tail": spec(_HEAD, numeric=True),
    "wc": spec("-c -m -l -L -w --bytes --chars --lines --words --max-line-length "
               "--files0-from= --total=?"),
    "grep": spec(_GREP, numeric=True),
    "egrep": spec(_GREP, numeric=True),
    "fgrep": spec(_GREP, numeric=True),
    "rg": spec(_RG, tail_safe=False),  # --pre runs a program
    "ls": spec(_LS),
    "tree": spec("-a -d -l -f -x -L= -P= -I= --gitignore --matchdirs --ignore-case --noreport "
                 "-i -q -N -Q -p -u -g -s -h --si --du -D --timefmt= -F --inodes --device -v "
                 "-t -c -U -r --dirsfirst --filesfirst --sort= -n -C -A -S --charset= "
                 "--filelimit= --prune -J", tail_safe=False),  # -o writes
    "pwd": spec("-L -P", operands=0),
    "echo": spec("", any_words=True),
    "printf": spec("", any_words=True),
    "true": spec("", any_words=True),
    "false": spec("", any_words=True),
    "test": spec("", any_words=True),
    "[": spec("", any_words=True),
    "file": spec("-b -c -E -e= -F= -f= -h -i -k -L -l -m= -N -n -0 -r -s -S -z -Z -P= "
                 "--brief --mime --mime-type --mime-encoding --no-dereference --dereference "
                 "--keep-going --raw --special-files --uncompress --uncompress-noreport "
                 "--files-from= --separator= --exclude= --exclude-quiet= --extension --apple "
                 "--no-buffer --no-pad --print0 --parameter=", tail_safe=False),  # -C writes
    "stat": spec("-L -f -t -c= --dereference --file-system --format= --printf= --terse "
                 "--cached=?"),
    "du": spec("-0 -a --apparent-size -B= --block-size= -b -c -D -d= -H -h -k -L -l -m -P -S "
               "-s -t= -x -X= --all --bytes --total --dereference-args --max-depth= "
               "--human-readable --inodes --count-links --dereference --no-dereference "
               "--separate-dirs --si --summarize --threshold= --time=? --time-style= "
               "--exclude-from= --exclude= --one-file-system --null --files0-from="),
    "df": spec("-a -B= -h -H -i -k -l -P -T -t= -x= --all --block-size= --human-readable --si "
               "--inodes --local --output=? --portability --print-type --type= "
               "--exclude-type= --total --sync --no-sync"),
    "which": spec("-a"),
    "type": spec("-a -f -p -P -t"),
    "command": spec("-v -V -p"),
    "whoami": spec("", operands=0),
    "id": spec("-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user "
               "--zero"),
    "uname": spec("-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename "
                  "--kernel-release --kernel-version --machine --processor "
                  "--hardware-platform --operating-system", operands=0),
    "basename": spec("-a -s= -z --multiple --suffix= --zero"),
    "dirname": spec("-z --zero"),
    "realpath": spec("-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing "
                     "--logical --physical --quiet --relative-to= --relative-base= --strip "
                     "--no-symlinks --zero"),
    "readlink": spec("-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing "
                     "--canonicalize-missing --no-newline --quiet --silent --verbose --zero"),
    "diff": spec(_DIFF),
    "cmp": spec("-b -i= -l -n= -s --print-bytes --ignore-initial= --verbose --bytes= --quiet "
                "--silent", operands=4),
    "comm": spec("-1 -2 -3 -z --check-order --nocheck-order --output-delimiter= --total "
                 "--zero-terminated", operands=2),
    "cut": spec("-b= -c= -d= -f= -n -s -z --bytes= --characters= --delimiter= --fields= "
                "--complement --only-delimited --output-delimiter= --zero-terminated"),
    "tr": spec("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1",
               operands=2),
    # a second operand is the file uniq writes
    "uniq": spec("-c -d -D -f= -i -s= -u -w= -z --count --repeated --all-repeated=? "
                 "--skip-fields= --group=? --ignore-case --skip-chars= --unique "
                 "--zero-terminated --check-chars=", operands=1, tail_safe=False),
    "nl": spec("-b= -d= -f= -h= -i= -l= -n= -p -s= -v= -w= --body-numbering= "
               "--section-delimiter= --footer-numbering= --header-numbering= "
               "--line-increment= --join-blank-lines= --number-format= --no-renumber "
               "--number-separator= --starting-line-number= --number-width="),
    "od": spec("-A= -j= -N= -S= -t= -v -w= -a -b -c -d -f -i -l -o -s -x --address-radix= "
               "--endian= --skip-bytes= --read-bytes= --strings=? --format= "
               "--output-duplicates --width=? --traditional"),
    "hexdump": spec("-b -c -C -d -o -x -e= -f= -n= -s= -v"),
    "md5sum": spec(_SUMS),
    "sha1sum": spec(_SUMS),
    "sha224sum": spec(_SUMS),
    "sha256sum": spec(_SUMS),
    "sha384sum": spec(_SUMS),
    "sha512sum": spec(_SUMS),
    "b2sum": spec(_SUMS + " -l= --length="),
    "cksum": spec("-a= --algorithm= --base64 --raw --tag --untagged -l= --length= -c --check "
                  "-z --zero"),
    "jq": spec("-n -r -j -a -s -c -C -M -S -e -R --null-input --raw-output --join-output "
               "--ascii-output --slurp --compact-output --color-output --monochrome-output "
               "--sort-keys --exit-status --raw-input --tab --indent= --seq --stream "
               "--stream-errors --arg=2 --argjson=2 --slurpfile=2 --rawfile=2 --args "
               "--jsonargs -f= --from-file= -L= --raw-output0"),
    "column": spec("-t -s= -o= -c= -x -n -e -N= -R= -H= -T= -W= -r= -J -L -l= -d --table "
                   "--separator= --output-separator= --output-width= --fillrows "
                   "--table-columns= --table-right= --table-hide= --table-truncate= "
                   "--table-wrap= --table-noheadings --json --keep-empty-lines"),
    "fold": spec("-b -s -w= --bytes --spaces --width="),
    "expand": spec("-i -t= --initial --tabs="),
    "unexpand": spec("-a -t= --all --first-only --tabs="),
    "rev": spec(""),
    "seq": spec("-f= -s= -w --format= --separator= --equal-width", numeric=True,
                operands=3),
    "printenv": spec("-0 --null"),
    "cd": spec("-L -P", operands=1),
    "xargs": spec("-0 -a= -d= -E= -I= -L= -n= -P= -p -r -s= -t -x --null --arg-file= "
                  "--delimiter= --eof=? --replace=? --max-lines=? --max-args= --max-procs= "
                  "--interactive --no-run-if-empty --max-chars= --verbose --exit "
                  "--process-slot-var= --show-limits", tail_safe=False,
                  stop_at_operand=True),
    "tac": spec("-b -r -s= --before --regex --separator="),
    "strings": spec("-a -d -f -n= -t= -e= -o -w -s= -T= --all --data --print-file-name "
                    "--bytes= --radix= --encoding= --include-all-whitespace "
                    "--output-separator= --unicode= --target="),
    "paste": spec("-d= -s -z --delimiters= --serial --zero-terminated"),
    "join": spec("-a= -e= -i -j= -o= -t= -v= -1= -2= -z --check-order --nocheck-order "
                 "--header --ignore-case --zero-terminated", operands=2),
    "locale": spec("-a -m -c -k -v --all-locales --charmaps --category-name --keyword-name "
                   "--verbose"),
    "nproc": spec("--all --ignore=", operands=0),
    "ps": spec("-A -e -a -d -N -T -r -x -f -F -l -j -H -w -y -L -M --forest --no-headers "
               "--headers -C= -G= -g= -p= -q= -s= -t= -U= -u= -o= -O= --pid= --ppid= --sort= "
               "--format= --cols= --columns= --rows= --lines= --user= --group=",
               operand=lambda w: re.fullmatch(r"[aAcehHjlLmnrsSTuvwxX]+", w) is not None),
    # an operand that is not +FORMAT sets the clock; -s is not listed
    "date": spec("-d= -f= -I=? -R -r= -u --date= --file= --iso-8601=? --rfc-email "
                 "--rfc-3339= --reference= --utc --universal --debug", operands=1,
                 operand=lambda w: w.startswith("+"), tail_safe=False),
    # a name sets the host name; -F and -b are not listed
    "hostname": spec("-a -A -d -f -i -I -s -y --alias --all-fqdns --domain --fqdn --long "
                     "--ip-address --all-ip-addresses --short --yp --nis", operands=0,
                     tail_safe=False),
    # sed only prints line ranges (its w, e and s///w commands write and run things)
    "sed": spec("-n --quiet --silent -E -r --regexp-extended -s --separate -z "
                "--null-data -u --unbuffered --posix", tail_safe=False,
                script=lambda w: re.fullmatch(r"(\d+|\$)(,(\d+|\$))?p", w) is not None),
    # -o, -T and --compress-program are not listed
    "sort": spec("-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z -k= -t= -S= --key= "
                 "--field-separator= --buffer-size= --parallel= --reverse --numeric-sort "
                 "--human-numeric-sort --version-sort --unique --stable --ignore-case "
                 "--check=? --debug --random-source= --files0-from= --zero-terminated "
                 "--month-sort --general-numeric-sort --dictionary-order "
                 "--ignore-leading-blanks --ignore-nonprinting --merge --sort= "
                 "--random-sort", tail_safe=False),
}

#: wrappers a read-only line may run a command under: none of their options writes or
#: runs anything else (``xargs`` and ``find`` are judged as commands of their own too)
LAUNCHERS = frozenset({"timeout", "nice", "command", "builtin", "xargs", "find"})

# --- find ------------------------------------------------------------------------------------

FIND_LEADING = frozenset({"-H", "-L", "-P"})
#: primaries that take one value
FIND_VALUED = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
    "-lname", "-ilname", "-type", "-xtype", "-size", "-perm", "-user", "-group", "-uid",
    "-gid", "-links", "-inum", "-samefile", "-newer", "-anewer", "-cnewer", "-mtime",
    "-atime", "-ctime", "-mmin", "-amin", "-cmin", "-used", "-maxdepth", "-mindepth",
    "-regextype", "-fstype", "-context", "-printf",
})
_FIND_NEWER = re.compile(r"^-newer[aBcmt][aBcmt]$")
#: primaries and operators that take none (-delete, -fprint*, -fls, -ok* are not here)
FIND_FLAGS = frozenset({
    "-print", "-print0", "-ls", "-prune", "-quit", "-empty", "-readable", "-writable",
    "-executable", "-nouser", "-nogroup", "-true", "-false", "-depth", "-follow", "-xdev",
    "-mount", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race", "-daystart",
    "-not", "!", "-a", "-and", "-o", "-or", ",", "(", ")", "-d",
})
FIND_EXEC = frozenset({"-exec", "-execdir"})


def find_valued(word: str) -> bool:
    return word in FIND_VALUED or _FIND_NEWER.match(word) is not None


__all__ = ["FIND_EXEC", "FIND_FLAGS", "FIND_LEADING", "LAUNCHERS", "PROGRAMS", "Options",
           "find_valued", "spec"]
