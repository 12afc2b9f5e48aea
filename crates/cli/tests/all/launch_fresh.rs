//! Each launch sees the home as it is when it starts: nothing one launch learned about the
//! filesystem (the resolution's memory of symlinks and prefixes, the Landlock rules'
//! descriptors) reaches the next. Between two launches of the same window a credential
//! directory appears, a sealed name becomes a symlink to a readable directory, and that
//! symlink is re-pointed; the second launch must seal what the home now holds. Live on both
//! Linux backends, as root and as uid 65534.

use crate::common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use common::{bare_tree, cage_here, chown_tree, jaula_run, Backend, User};

const BACKENDS: [Backend; 2] = [Backend::Landlock, Backend::Bwrap];

/// `cat FILE` in a cage of `home` as `user`: what it printed.
fn cat_in_cage(backend: Backend, user: User, home: &Path, repo: &Path, file: &Path) -> String {
    let mut cmd = jaula_run(backend, home, repo);
    cmd.args(["--quiet", "--", "/bin/cat"]).arg(file);
    user.apply(&mut cmd);
    let out = cmd.output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_home_changed_between_launches_is_sealed_as_it_now_is() {
    for backend in BACKENDS {
        for user in common::users() {
            if !cage_here(backend, user) {
                continue;
            }
            let (_keep, root, home, repo) = bare_tree("launch-fresh-");
            let keys = home.join("keys");
            let other = home.join("other");
            fs::create_dir_all(&keys).unwrap();
            fs::create_dir_all(&other).unwrap();
            fs::write(keys.join("id_ed25519"), "keys-marker\n").unwrap();
            fs::write(other.join("id_ed25519"), "other-marker\n").unwrap();
            chown_tree(&root, user.uid());
            let case = format!("{} as uid {}", backend.name(), user.uid());
            let cat = |file: &Path| cat_in_cage(backend, user, &home, &repo, file);

            // 1. Nothing sealed holds the keys yet: the first launch reads them.
            assert!(
                cat(&keys.join("id_ed25519")).contains("keys-marker"),
                "{case}"
            );

            // 2. A credential directory appears: the next launch seals it.
            let aws = home.join(".aws");
            fs::create_dir_all(&aws).unwrap();
            fs::write(aws.join("credentials"), "aws-marker\n").unwrap();
            chown_tree(&aws, user.uid());
            assert!(
                !cat(&aws.join("credentials")).contains("aws-marker"),
                "{case}: a ~/.aws made after the last launch was readable"
            );

            // 3. `~/.ssh` becomes a link to the keys: the next launch seals its target.
            symlink("keys", home.join(".ssh")).unwrap();
            assert!(
                !cat(&keys.join("id_ed25519")).contains("keys-marker"),
                "{case}: the target of a ~/.ssh link made after the last launch was readable"
            );

            // 4. The link is re-pointed: the new target is sealed, the old one readable.
            fs::remove_file(home.join(".ssh")).unwrap();
            symlink("other", home.join(".ssh")).unwrap();
            assert!(
                !cat(&other.join("id_ed25519")).contains("other-marker"),
                "{case}: the new target of a re-pointed ~/.ssh was readable"
            );
            assert!(
                cat(&keys.join("id_ed25519")).contains("keys-marker"),
                "{case}: the old target of a re-pointed ~/.ssh stayed sealed"
            );
        }
    }
}
