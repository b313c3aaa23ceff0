//! Which files git tracks. In a git work tree, files a pull request names for warden to read (a
//! known-issues `where` or `coverage` path) must be tracked: untracked files in a CI checkout are
//! the runner's, not the repository's.

use crate::error::Reason;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::paths::enclosing_git_work_tree;

/// The files a repository root may read on behalf of its content.
#[derive(Debug)]
pub(crate) enum Tracked {
    /// Not in a git work tree: every file under the root counts.
    NotGit,
    /// Paths relative to the root, as git lists them.
    Files(HashSet<PathBuf>),
    /// A work tree whose index could not be listed (no `git` on the PATH): nothing counts.
    Unknown(String),
}

/// `git` for the work tree `tree`: trusted explicitly (a CI container's checkout is often owned by
/// another user, and git would refuse it as a "dubious" directory), with no fsmonitor hook run,
/// and with no repository named by the environment.
pub(crate) fn git(tree: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-c")
        .arg(format!("safe.directory={}", tree.display()))
        .args(["-c", "core.fsmonitor=false"])
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null());
    cmd
}

impl Tracked {
    /// Lists the files git tracks under `root` (one `git ls-files` run).
    pub(crate) fn of(root: &Path) -> Tracked {
        let Some(tree) = enclosing_git_work_tree(root) else {
            return Tracked::NotGit;
        };
        let output = git(&tree)
            .arg("ls-files")
            .arg("-z")
            .current_dir(root)
            .stderr(Stdio::null())
            .output();
        match output {
            Ok(o) if o.status.success() => Tracked::Files(
                o.stdout
                    .split(|b| *b == 0)
                    .filter(|p| !p.is_empty())
                    .filter_map(|p| std::str::from_utf8(p).ok())
                    .map(PathBuf::from)
                    .collect(),
            ),
            Ok(o) => Tracked::Unknown(format!("`git ls-files` failed ({})", o.status)),
            Err(e) => Tracked::Unknown(format!("cannot run `git ls-files`: {e}")),
        }
    }

    /// Whether `rel` (relative to the root, without `.` components) may be read; `Err` says why not.
    pub(crate) fn check(&self, rel: &Path) -> Result<(), Reason> {
        let rel: PathBuf = rel
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect();
        match self {
            Tracked::NotGit => Ok(()),
            Tracked::Files(files) if files.contains(&rel) => Ok(()),
            Tracked::Files(_) => Err("is not tracked by git".into()),
            Tracked::Unknown(why) => {
                Err(format!("cannot tell whether it is tracked: {why}").into())
            }
        }
    }
}
