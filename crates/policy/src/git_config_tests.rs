use std::path::Path;

use super::{admit, parse, ConfigRefusal};

const GIT_DIR: &str = "/work/repo/.git/modules/lib";
const ROOTS: &[&str] = &["/work/repo"];

/// The judge the supervisor passes, without the filesystem: resolved lexically, inside
/// `ROOTS`. (What the supervisor's judge adds, physical resolution and the protected and
/// sealed paths, is tested in `judge_worktree_place_*` and live.)
fn inside_roots(_git_dir: &Path, joined: &Path) -> Result<(), String> {
    let resolved = crate::paths::normalize_lexically(joined);
    if ROOTS.iter().any(|r| resolved.starts_with(r)) {
        Ok(())
    } else {
        Err("outside every writable root".into())
    }
}

fn check(new: &str, current: Option<&str>) -> Result<(), ConfigRefusal> {
    admit(
        new.as_bytes(),
        current.map(str::as_bytes),
        Path::new(GIT_DIR),
        &inside_roots,
    )
}

/// What git 2.39 and 2.47 write for `git init`, `git clone`, `git remote add`, `git config
/// user.name` and `git submodule add`, and libgit2 for `cargo new`.
#[test]
fn what_git_and_libgit2_write_is_admitted() {
    let files = [
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
        "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n\trefstorage = reftable\n",
        "[remote \"origin\"]\n\turl = /tmp/bare.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
        "[user]\n\tname = agent\n\temail = agent@example.invalid\n",
        "[submodule \"lib\"]\n\turl = /tmp/bare.git\n\tactive = true\n",
        "[core]\n\tworktree = ../../../lib\n",
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n\tignorecase = false\n[advice]\n\tdetachedHead = false\n",
    ];
    for file in files {
        assert_eq!(check(file, None), Ok(()), "{file}");
    }
}

/// Every key git-config(1) documents as naming a program, a command, a script, a file it
/// reads more config from or a hook directory, and the few that widen what a fetch runs.
const RUNS_CODE: &[(&str, &str)] = &[
    ("[core]\n\tfsmonitor = touch x\n", "core.fsmonitor"),
    ("[core]\n\thooksPath = /tmp/h\n", "core.hookspath"),
    ("[core]\n\tsshCommand = sh -c x\n", "core.sshcommand"),
    ("[core]\n\tpager = sh -c x\n", "core.pager"),
    ("[core]\n\teditor = x\n", "core.editor"),
    ("[core]\n\taskPass = x\n", "core.askpass"),
    ("[core]\n\tgitProxy = x\n", "core.gitproxy"),
    (
        "[core]\n\talternateRefsCommand = x\n",
        "core.alternaterefscommand",
    ),
    ("[core]\n\tattributesFile = x\n", "core.attributesfile"),
    ("[core]\n\texcludesFile = x\n", "core.excludesfile"),
    ("[sequence]\n\teditor = x\n", "sequence.editor"),
    ("[pager]\n\tlog = x\n", "pager.log"),
    ("[alias]\n\tst = !touch x\n", "alias.st"),
    ("[alias]\n\tco = checkout\n", "alias.co"),
    ("[diff]\n\texternal = x\n", "diff.external"),
    ("[diff \"d\"]\n\tcommand = x\n", "diff.d.command"),
    ("[diff \"d\"]\n\ttextconv = x\n", "diff.d.textconv"),
    ("[diff]\n\ttool = t\n", "diff.tool"),
    ("[difftool \"t\"]\n\tcmd = x\n", "difftool.t.cmd"),
    ("[merge \"m\"]\n\tdriver = x\n", "merge.m.driver"),
    ("[merge]\n\ttool = t\n", "merge.tool"),
    ("[mergetool \"t\"]\n\tcmd = x\n", "mergetool.t.cmd"),
    ("[filter \"f\"]\n\tclean = x\n", "filter.f.clean"),
    ("[filter \"f\"]\n\tsmudge = x\n", "filter.f.smudge"),
    ("[filter \"f\"]\n\tprocess = x\n", "filter.f.process"),
    ("[credential]\n\thelper = x\n", "credential.helper"),
    (
        "[credential \"https://h\"]\n\thelper = x\n",
        "credential.https://h.helper",
    ),
    ("[gpg]\n\tprogram = x\n", "gpg.program"),
    ("[gpg \"ssh\"]\n\tprogram = x\n", "gpg.ssh.program"),
    (
        "[gpg \"ssh\"]\n\tdefaultKeyCommand = x\n",
        "gpg.ssh.defaultkeycommand",
    ),
    ("[commit]\n\tgpgSign = true\n", "commit.gpgsign"),
    ("[include]\n\tpath = /tmp/evil\n", "include.path"),
    (
        "[includeIf \"gitdir:/\"]\n\tpath = /tmp/evil\n",
        "includeif.gitdir:/.path",
    ),
    ("[remote \"o\"]\n\tuploadpack = x\n", "remote.o.uploadpack"),
    (
        "[remote \"o\"]\n\treceivepack = x\n",
        "remote.o.receivepack",
    ),
    ("[remote \"o\"]\n\tvcs = x\n", "remote.o.vcs"),
    ("[remote \"o\"]\n\tproxy = x\n", "remote.o.proxy"),
    ("[submodule \"s\"]\n\tupdate = !x\n", "submodule.s.update"),
    (
        "[protocol \"ext\"]\n\tallow = always\n",
        "protocol.ext.allow",
    ),
    ("[protocol]\n\tallow = always\n", "protocol.allow"),
    ("[hook \"h\"]\n\tcommand = x\n", "hook.h.command"),
    ("[hook \"h\"]\n\tevent = pre-commit\n", "hook.h.event"),
    (
        "[uploadpack]\n\tpackObjectsHook = x\n",
        "uploadpack.packobjectshook",
    ),
    ("[trace2]\n\teventTarget = /tmp/x\n", "trace2.eventtarget"),
    ("[trace2]\n\tnormalTarget = /tmp/x\n", "trace2.normaltarget"),
    ("[trace2]\n\tperfTarget = /tmp/x\n", "trace2.perftarget"),
    ("[http]\n\tcookieFile = /tmp/x\n", "http.cookiefile"),
    ("[http]\n\tsaveCookies = true\n", "http.savecookies"),
    ("[http]\n\tproxy = x\n", "http.proxy"),
    ("[http]\n\tsslCAInfo = x\n", "http.sslcainfo"),
    (
        "[interactive]\n\tdiffFilter = x\n",
        "interactive.difffilter",
    ),
    ("[web]\n\tbrowser = x\n", "web.browser"),
    ("[browser \"b\"]\n\tcmd = x\n", "browser.b.cmd"),
    ("[browser \"b\"]\n\tpath = x\n", "browser.b.path"),
    ("[man \"m\"]\n\tcmd = x\n", "man.m.cmd"),
    ("[man]\n\tviewer = m\n", "man.viewer"),
    ("[sendemail]\n\tsendmailCmd = x\n", "sendemail.sendmailcmd"),
    (
        "[sendemail]\n\tsmtpServer = /bin/x\n",
        "sendemail.smtpserver",
    ),
    ("[sendemail]\n\ttoCmd = x\n", "sendemail.tocmd"),
    ("[sendemail]\n\tccCmd = x\n", "sendemail.cccmd"),
    ("[instaweb]\n\thttpd = x\n", "instaweb.httpd"),
    (
        "[receive]\n\tprocReceiveRefs = x\n",
        "receive.procreceiverefs",
    ),
    ("[gc]\n\tlogExpiry = now\n", "gc.logexpiry"),
    ("[safe]\n\tdirectory = *\n", "safe.directory"),
    (
        "[url \"ext::sh\"]\n\tinsteadOf = x\n",
        "url.ext::sh.insteadof",
    ),
    ("[fsmonitor]\n\tsocketDir = x\n", "fsmonitor.socketdir"),
    ("[lfs]\n\tcustomTransfer = x\n", "lfs.customtransfer"),
    // Not code, but an unasked fetch from a URL the cage chose, with the owner's
    // credentials, at the owner's next checkout.
    (
        "[extensions]\n\tpartialClone = origin\n",
        "extensions.partialclone",
    ),
    (
        "[remote \"origin\"]\n\tpromisor = true\n",
        "remote.origin.promisor",
    ),
    (
        "[remote \"origin\"]\n\tpartialCloneFilter = blob:none\n",
        "remote.origin.partialclonefilter",
    ),
];

#[test]
fn every_key_that_runs_code_is_refused_by_name() {
    for (file, name) in RUNS_CODE {
        let refusal = check(file, None).expect_err(file);
        assert_eq!(
            refusal,
            ConfigRefusal::Key {
                name: name.to_string()
            },
            "{file}"
        );
        assert!(refusal.to_string().contains(name), "{refusal}");
    }
}

#[test]
fn names_compare_as_git_compares_them() {
    // Sections and keys case-insensitively: a key spelled otherwise is the same key.
    assert_eq!(
        check("[CORE]\n\tFsMonitor = x\n", None),
        Err(ConfigRefusal::Key {
            name: "core.fsmonitor".into()
        })
    );
    assert_eq!(check("[Core]\n\tBare = false\n", None), Ok(()));
    // Subsections case-sensitively.
    let entries = parse(b"[remote \"Origin\"]\n\turl = x\n").unwrap();
    assert_eq!(entries[0].subsection.as_deref(), Some(&b"Origin"[..]));
}

#[test]
fn an_unchanged_key_of_the_file_replaced_stays() {
    let owner = "[core]\n\tbare = false\n\tpager = less -R\n";
    // The owner's own setting, with a safe key added by git.
    let new = "[core]\n\tbare = false\n\tpager = less -R\n[user]\n\tname = a\n";
    assert_eq!(check(new, Some(owner)), Ok(()));
    // The same key with another value is a new key.
    let changed = "[core]\n\tbare = false\n\tpager = sh -c x\n";
    assert_eq!(
        check(changed, Some(owner)),
        Err(ConfigRefusal::Key {
            name: "core.pager".into()
        })
    );
    // Moved to another subsection is a new key too.
    let owner = "[alias \"a\"]\n\tx = y\n";
    assert!(check("[alias \"b\"]\n\tx = y\n", Some(owner)).is_err());
    // A current file that does not parse keeps nothing.
    assert!(check("[core]\n\tpager = less\n", Some("[core\n\tpager = less\n")).is_err());
}

#[test]
fn worktree_must_stay_inside_a_writable_root() {
    assert_eq!(check("[core]\n\tworktree = ..\n", None), Ok(()));
    assert_eq!(check("[core]\n\tworktree = /work/repo/x\n", None), Ok(()));
    for outside in [
        "../../../../..",
        "/home/owner",
        "/work/repository",
        "~/x",
        "\"\"",
    ] {
        let file = format!("[core]\n\tworktree = {outside}\n");
        let refusal = check(&file, None).expect_err(&file);
        assert!(
            matches!(refusal, ConfigRefusal::Worktree { .. }),
            "{file}: {refusal:?}"
        );
        assert!(refusal.to_string().contains("core.worktree"));
    }
}

#[test]
fn values_are_read_as_git_reads_them() {
    let entries =
        parse(b"[a]\n\tk = \"x # y\" z # c\n\tq = a\\\n b\n\tb\n\te =\n[s \"q\\\"\\\\\"]\nk=v;c\n")
            .unwrap();
    let got: Vec<(String, Option<Vec<u8>>)> = entries
        .iter()
        .map(|e| (e.name(), e.value.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a.k".into(), Some(b"x # y z".to_vec())),
            ("a.q".into(), Some(b"a b".to_vec())),
            ("a.b".into(), None),
            ("a.e".into(), Some(Vec::new())),
            ("s.q\"\\.k".into(), Some(b"v".to_vec())),
        ]
    );
    // A key on the header's own line, and CRLF line ends.
    let entries = parse(b"[core] bare = true\r\n").unwrap();
    assert_eq!(entries[0].name(), "core.bare");
}

#[test]
fn anything_not_read_exactly_as_git_would_is_refused() {
    for text in [
        "bare = true\n",           // a key before any section
        "[core\n",                 // an unclosed header
        "[core.sub]\n\tx = 1\n",   // the deprecated form
        "[core \"a\n\"]\n",        // a newline in a subsection
        "[core \"a\"\n",           // no closing bracket
        "[core]\n\tx = \"open\n",  // an unclosed quote
        "[core]\n\tx = \\q\n",     // an unknown escape
        "[core]\n\t1x = y\n",      // a key not starting with a letter
        "[core]\n\tx y = z\n",     // a space in a key
        "[core]\n\tx = a\0b\n",    // NUL
        "[core]\r\tbare = true\n", // a lone carriage return
        "[core]\n\tx\x0b= y\n",    // a control character
        "[]\n",                    // an empty section
    ] {
        assert!(
            matches!(check(text, None), Err(ConfigRefusal::Unreadable { .. })),
            "{text:?}"
        );
    }
}

#[test]
fn comments_and_blank_lines_are_not_keys() {
    assert_eq!(
        check(
            "# [core]\n; fsmonitor = x\n\n[core] ; c\n\tbare = false # c\n",
            None
        ),
        Ok(())
    );
    assert_eq!(check("", None), Ok(()));
    assert_eq!(check("\u{feff}[core]\n\tbare = false\n", None), Ok(()));
}
