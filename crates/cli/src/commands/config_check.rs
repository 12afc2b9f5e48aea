//! Every value of the config file is checked as the file is read (jaula-policy reads each
//! into its typed form and refuses a bad one with its key and line). What is left here is
//! what only makes sense across values: the `[network]` lists resolved together.
//! `check` lists the problems and `run` refuses on the first (exit 126), whether or not
//! this run would have used the value: a config that is wrong is wrong for the next run
//! too, and saying so now is cheaper.

use jaula_policy::Sources;

use crate::error::ConfigProblem;

/// Every problem, each naming the file and the key.
pub fn problems(sources: &Sources) -> Vec<ConfigProblem> {
    let lists = sources.network.check_lists().err();
    lists
        .into_iter()
        .map(|problem| ConfigProblem {
            file: sources.config_path.clone(),
            problem,
        })
        .collect()
}
