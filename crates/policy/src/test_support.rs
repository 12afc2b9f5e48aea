/// Scratch directories for unit tests. Never under `/tmp`: `/tmp` is a writable root of
/// every Linux cage, so a scratch home there would be writable whole and prove nothing.
pub(crate) fn test_scratch() -> tempfile::TempDir {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::Builder::new()
        .prefix("policy-")
        .tempdir_in(base)
        .unwrap()
}

/// A canonical scratch root holding `home/` and a repo directory, both created.
pub(crate) struct Scratch {
    _dir: tempfile::TempDir,
    pub(crate) root: std::path::PathBuf,
    pub(crate) home: std::path::PathBuf,
    pub(crate) repo: std::path::PathBuf,
}

impl Scratch {
    /// `home/` and `repo/`.
    pub(crate) fn new() -> Scratch {
        Scratch::with_repo("repo")
    }
    /// `home/` and the repo at `repo`, relative to the root.
    pub(crate) fn with_repo(repo: &str) -> Scratch {
        let dir = test_scratch();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let (home, repo) = (root.join("home"), root.join(repo));
        for dir in [&home, &repo] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Scratch {
            _dir: dir,
            root,
            home,
            repo,
        }
    }
    /// The default declaration for this home and repo.
    pub(crate) fn spec(&self, platform: crate::Platform) -> crate::PolicySpec {
        crate::PolicySpec::with_defaults(platform, self.home.clone(), self.repo.clone())
    }
}

/// `policy` allows `access` to `path`, by `rule`.
pub(crate) fn assert_allowed_by(
    policy: &crate::Policy,
    path: &std::path::Path,
    access: crate::Access,
    rule: crate::Rule,
) {
    let d = policy.decide(path, access);
    assert!(d.allowed, "{access} {}", path.display());
    assert_eq!(d.rule, rule, "{access} {}", path.display());
}

/// A host described entry by entry, symlinks and file contents included, that exists
/// nowhere on the real disk: a read that reaches the kernel instead finds nothing.
#[derive(Default)]
pub(crate) struct MemFs {
    nodes: std::collections::BTreeMap<std::path::PathBuf, Node>,
}

enum Node {
    Dir,
    File(Vec<u8>),
    Link(std::path::PathBuf),
}

impl MemFs {
    /// A directory at the absolute `path`, with its ancestors.
    pub(crate) fn dir(mut self, path: &str) -> Self {
        self.insert(path, Node::Dir);
        self
    }
    /// A file holding `text`.
    pub(crate) fn file(mut self, path: &str, text: &str) -> Self {
        self.insert(path, Node::File(text.as_bytes().to_vec()));
        self
    }
    /// A symlink to `target`, as written.
    pub(crate) fn link(mut self, path: &str, target: &str) -> Self {
        self.insert(path, Node::Link(target.into()));
        self
    }
    fn insert(&mut self, path: &str, node: Node) {
        let path = std::path::Path::new(path);
        for ancestor in path.ancestors().skip(1) {
            self.nodes
                .entry(ancestor.to_path_buf())
                .or_insert(Node::Dir);
        }
        self.nodes.insert(path.to_path_buf(), node);
    }
    fn kind_of(node: &Node) -> crate::EntryKind {
        match node {
            Node::Dir => crate::EntryKind::Directory,
            Node::File(_) => crate::EntryKind::File,
            Node::Link(_) => crate::EntryKind::Symlink,
        }
    }
}

impl crate::HostFs for MemFs {
    fn kind(&self, path: &std::path::Path) -> std::io::Result<Option<crate::EntryKind>> {
        Ok(self.nodes.get(path).map(MemFs::kind_of))
    }
    fn resolved_kind(&self, path: &std::path::Path) -> std::io::Result<Option<crate::EntryKind>> {
        match self.canonicalize(path) {
            Ok(real) => self.kind(&real),
            Err(_) => Ok(None),
        }
    }
    fn list(
        &self,
        dir: &std::path::Path,
    ) -> std::io::Result<Vec<(std::ffi::OsString, crate::EntryKind)>> {
        Ok(self
            .nodes
            .iter()
            .filter(|(p, _)| p.parent() == Some(dir))
            .filter_map(|(p, n)| Some((p.file_name()?.to_os_string(), MemFs::kind_of(n))))
            .collect())
    }
    fn read_link(&self, path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
        match self.nodes.get(path) {
            Some(Node::Link(target)) => Ok(target.clone()),
            Some(_) => Err(std::io::ErrorKind::InvalidInput.into()),
            None => Err(std::io::ErrorKind::NotFound.into()),
        }
    }
    fn read(&self, path: &std::path::Path) -> std::io::Result<Vec<u8>> {
        match self.nodes.get(&self.canonicalize(path)?) {
            Some(Node::File(bytes)) => Ok(bytes.clone()),
            _ => Err(std::io::ErrorKind::InvalidInput.into()),
        }
    }
}
