"""The git subcommands a read-only line may run, each with the options it may take.

No global option but ``--no-pager`` (``-C``, ``--git-dir``, ``--work-tree`` and ``-c``
point git at a repository or config the workspace controls); no option that writes a
file (``--output``), runs a program (``--ext-diff``, ``--textconv``,
``--open-files-in-pager``, ``--show-signature``) or reaches the network. Subcommands
that also create or change things read only in their listing forms (``branch``, ``tag``,
``config``, ``remote``, ``stash``, ``worktree``). See `_readonly_options` for the spec
syntax.
"""

from __future__ import annotations

from ._readonly_options import Options, spec

_DIFF = (
    "-p -u --patch -s --no-patch --raw --patch-with-raw --patch-with-stat --stat=? "
    "--stat-width= --stat-name-width= --stat-count= --stat-graph-width= --numstat "
    "--shortstat --summary --name-only --name-status --compact-summary --check --full-index "
    "--binary --abbrev=? --no-abbrev -z --no-color --color=? --color-words=? --word-diff=? "
    "--word-diff-regex= --color-moved=? --no-color-moved --color-moved-ws= --no-renames "
    "--rename-empty --no-rename-empty -M=? -C=? -B=? --find-renames=? --find-copies=? "
    "--break-rewrites=? --find-copies-harder -D --irreversible-delete -l= --diff-filter= -R "
    "--relative=? --no-relative -a --text --ignore-cr-at-eol --ignore-space-at-eol -b "
    "--ignore-space-change -w --ignore-all-space --ignore-blank-lines "
    "--ignore-matching-lines= -I= --minimal --patience --histogram --anchored= "
    "--diff-algorithm= --indent-heuristic --no-indent-heuristic -W --function-context "
    "--exit-code --quiet --no-ext-diff --no-textconv --ignore-submodules=? --submodule=? "
    "--src-prefix= --dst-prefix= --no-prefix --default-prefix --line-prefix= "
    "--ita-invisible-in-index --ita-visible-in-index -U= --unified= --inter-hunk-context= "
    "--dirstat=? -X=? --cumulative --dirstat-by-file=? -G= -S= --pickaxe-all "
    "--pickaxe-regex --find-object= --full-diff --merge-base --cached --staged --no-index "
    "--ws-error-highlight= --output-indicator-new= --output-indicator-old= "
    "--output-indicator-context= --no-stat")
_LOG = (
    "--oneline --graph --decorate=? --no-decorate --decorate-refs= --decorate-refs-exclude= "
    "--all --branches=? --tags=? --remotes=? --glob= --exclude= --first-parent --merges "
    "--no-merges --reverse --follow --no-follow -n= --max-count= --skip= --since= --after= "
    "--until= --before= --since-as-filter= --author= --committer= --grep= --all-match "
    "--invert-grep -i --regexp-ignore-case -E --extended-regexp -F --fixed-strings -P "
    "--perl-regexp --basic-regexp --format= --pretty=? --abbrev-commit --no-abbrev-commit "
    "--date= --relative-date --left-right --cherry-pick --cherry-mark --cherry --boundary "
    "--ancestry-path=? --simplify-by-decoration --full-history --dense --sparse "
    "--simplify-merges --topo-order --date-order --author-date-order --parents --children "
    "--no-walk=? --do-walk --encoding= --notes=? --no-notes --show-notes=? --source "
    "--use-mailmap --mailmap --no-mailmap --log-size -L= --walk-reflogs -g --min-parents= "
    "--max-parents= --no-min-parents --no-max-parents --show-linear-break=? --expand-tabs=? "
    "--no-expand-tabs --clear-decorations -m --diff-merges= --no-diff-merges --cc -c --dd "
    "--remerge-diff --not --left-only --right-only --single-worktree --show-pulls "
    "--count --objects --objects-edge --no-object-names --timestamp --header "
    "--bisect --in-commit-order --reflog --alternate-refs")
_LOG_DIFF = _LOG + " " + _DIFF

#: every read-only subcommand and its options (operands are revisions and paths)
SUBCOMMANDS: dict[str, Options] = {
    "status": spec("-s --short -b --branch --show-stash --porcelain=? --long -v --verbose "
                   "-u=? --untracked-files=? --ignored=? --ignore-submodules=? -z "
                   "--column=? --no-column --ahead-behind --no-ahead-behind --renames "
                   "--no-renames --find-renames=? --no-optional-locks"),
    "diff": spec(_DIFF),
    "log": spec(_LOG_DIFF, numeric=True),
    "show": spec(_LOG_DIFF, numeric=True),
    "whatchanged": spec(_LOG_DIFF, numeric=True),
    "shortlog": spec(_LOG_DIFF.replace(" -n= ", " ") + " -n --numbered -s --summary -e "
                     "--email -w=? --group= --committer", numeric=True),
    "rev-list": spec(_LOG_DIFF, numeric=True),
    "blame": spec("-L= -l -t -S= --reverse= --first-parent -p --porcelain --line-porcelain "
                  "--incremental -e --show-email -s -n --show-number -f --show-name -w "
                  "--root --show-stats -M=? -C=? --date= --abbrev=? --ignore-rev= "
                  "--ignore-revs-file= --color-lines --color-by-age --contents= -c "
                  "--score-debug --since= --no-progress"),
    "grep": spec("-i -I -w -v -h -H --full-name -E -G -F -P -n -l -L -c -o -q --quiet -z "
                 "--null -a --text --cached --no-index --untracked --max-depth= -e= -f= "
                 "--and --or --not --all-match --heading --break --show-function -p -W "
                 "--function-context -A= -B= -C= --after-context= --before-context= "
                 "--context= -m= --max-count= --threads= --color=? --no-color --column "
                 "--only-matching --exclude-standard --no-exclude-standard -r --recursive "
                 "--no-recursive --ignore-case --word-regexp --invert-match --line-number "
                 "--files-with-matches --name-only --files-without-match --count "
                 "--basic-regexp --extended-regexp --fixed-strings --perl-regexp",
                 numeric=True),
    "ls-files": spec("-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified "
                     "--others --ignored --stage --unmerged --killed --directory "
                     "--no-empty-directory --eol --exclude= -x= --exclude-from= -X= "
                     "--exclude-per-directory= --exclude-standard --error-unmatch "
                     "--full-name --recurse-submodules --abbrev=? --debug --deduplicate "
                     "--sparse --format= --with-tree="),
    "ls-tree": spec("-d -r -t -l --long -z --name-only --name-status --object-only "
                    "--full-name --full-tree --abbrev=? --format="),
    "rev-parse": spec("--abbrev-ref=? --short=? --verify -q --quiet --symbolic "
                      "--symbolic-full-name --all --branches=? --tags=? --remotes=? --glob= "
                      "--exclude= --show-toplevel --show-prefix --show-cdup --git-dir "
                      "--git-common-dir --absolute-git-dir --is-inside-work-tree "
                      "--is-inside-git-dir --is-bare-repository --is-shallow-repository "
                      "--show-superproject-working-tree --git-path= --sq --not --default= "
                      "--prefix= --local-env-vars --path-format= --since= --after= "
                      "--until= --before= --disambiguate= --revs-only --no-revs --flags "
                      "--no-flags --show-object-format=? --sq-quote --end-of-options"),
    "describe": spec("--all --tags --contains --abbrev= --candidates= --exact-match --debug "
                     "--long --match= --exclude= --always --first-parent --dirty=? "
                     "--broken=?"),
    "cat-file": spec("-t -s -e -p --batch=? --batch-check=? --batch-command=? "
                     "--batch-all-objects --buffer --follow-symlinks --unordered -z "
                     "--allow-unknown-type --mailmap --no-mailmap --use-mailmap"),
    "merge-base": spec("-a --all --octopus --independent --is-ancestor --fork-point"),
    "name-rev": spec("--tags --refs= --exclude= --all --annotate-stdin --name-only "
                     "--no-undefined --always"),
    "show-ref": spec("-d --dereference -s --hash=? --verify --heads --tags --head "
                     "--abbrev=? -q --quiet --exists"),
    "for-each-ref": spec("--count= --sort= --format= --color=? --shell -s --perl --python "
                         "--tcl --points-at= --merged=? --no-merged=? --contains=? "
                         "--no-contains=? --ignore-case --omit-empty --exclude="),
    "count-objects": spec("-v -H --verbose --human-readable", operands=0),
    "version": spec("--build-options", operands=0),
}
#: listing forms only: operands are allowed only beside one of the ``listing`` options
LISTERS: dict[str, tuple[Options, frozenset[str]]] = {
    "branch": (spec("-a -r -v -vv --list -l --all --remotes --show-current --contains=? "
                    "--no-contains=? --merged=? --no-merged=? --points-at= --format= --sort= "
                    "--color=? --no-color --column=? --no-column --abbrev=? --no-abbrev -i "
                    "--ignore-case --omit-empty"), frozenset({"-l", "--list"})),
    "tag": (spec("-l --list -n=? --sort= --format= --contains=? --no-contains=? --merged=? "
                 "--no-merged=? --points-at= --color=? --column=? --no-column -i "
                 "--ignore-case --omit-empty"), frozenset({"-l", "--list"})),
    # a get or list mode is required (anything else sets a value)
    "config": (spec("--get --get-all --get-regexp --list -l --global --system --local "
                    "--worktree --file= -f= --blob= --show-origin --show-scope --null -z "
                    "--name-only --type= --bool --int --bool-or-int --path --expiry-date "
                    "--default= --includes --no-includes", operands=2),
               frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l"})),
}
#: ``git <sub> <action>`` forms that read (``remote show`` reaches the network: not here)
ACTIONS: dict[str, dict[str | None, Options]] = {
    "remote": {None: spec("-v --verbose", operands=0),
               "get-url": spec("--push --all", operands=1)},
    "stash": {"list": spec(_LOG_DIFF, numeric=True),
              "show": spec(_DIFF + " -u --include-untracked --only-untracked", operands=1)},
    "worktree": {"list": spec("--porcelain -v --verbose -z --expire=", operands=0)},
}

__all__ = ["ACTIONS", "LISTERS", "SUBCOMMANDS"]
