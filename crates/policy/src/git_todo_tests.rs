use super::{admit, TodoRefusal};

#[test]
fn a_todo_list_of_picks_and_friends_is_admitted() {
    let todo = b"pick 1a2b3c one\n\
        fixup -C 4d5e6f two\n\
        # exec make (a comment)\n\
        \n\
        break\n\
        label onto\n\
        reset onto\n\
        merge -C 7a8b9c topic # Merge topic\n\
        update-ref refs/heads/side\n\
        drop 0f0f0f three\n";
    assert_eq!(admit(todo), Ok(()));
    assert_eq!(admit(b""), Ok(()));
    // A commit subject may say anything after its hash.
    assert_eq!(admit(b"pick 1a2b3c exec rm -rf ~\n"), Ok(()));
}

#[test]
fn exec_lines_are_refused_in_every_spelling_git_reads_and_more() {
    for (todo, line) in [
        (&b"pick 1a2b3c one\nexec make test\n"[..], 2),
        (b"x make test\n", 1),
        (b"  \texec make\n", 1),
        (b"pick a\r\nexec\tmake\r\n", 2),
        (b"EXEC make\n", 1),
        (b"X\x0bmake\n", 1),
        (b"exec", 1),
        (b"pick a\n\0\nexec make\n", 3),
    ] {
        assert_eq!(admit(todo), Err(TodoRefusal { line }), "{todo:?}");
    }
    // Not the command word: admitted.
    assert_eq!(admit(b"execute a\nxx b\n"), Ok(()));
}

#[test]
fn the_refusal_names_the_line_and_what_to_do() {
    let text = admit(b"pick a\nx true\n").unwrap_err().to_string();
    assert!(text.contains("line 2"), "{text}");
    assert!(text.contains("git rebase --continue"), "{text}");
}
