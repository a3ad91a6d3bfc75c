;;; eglot_drive.el --- drive Debian's stock eglot against `tether serve' -*- lexical-binding: t -*-

;; Run by test_emacs_eglot.py as `emacs --batch -l eglot_drive.el'.  Nothing here is
;; Tether code: eglot is configured the way the README says, and the user's answers
;; (the approval, the question, the code action to run, "proceed with the edit?") are
;; given where Emacs asks them: `completing-read' and `y-or-n-p'.  What the user saw is
;; written as JSON to $TETHER_EGLOT_OUT for the test to check.

(require 'package)
(package-initialize)
(require 'eglot)
(require 'json)
(require 'python)

(defvar drive-workspace (file-name-as-directory (getenv "TETHER_EGLOT_WORKSPACE")))
(defvar drive-out (getenv "TETHER_EGLOT_OUT"))
(defvar drive-seen nil "Notifications from the server: (METHOD . PARAMS).")
(defvar drive-asked nil "What Emacs asked the user (the prompts).")

;; The README's set-up (its snippet, with this test's daemon and mode): Tether as the
;; language server of the modes you want it in, and `tether-ask'.
(load (getenv "TETHER_EGLOT_README") nil t)
;; The workspace is a project (a folder without a VCS here).
(add-hook 'project-find-functions (lambda (_dir) (cons 'transient drive-workspace)))

;; The user's answers.
(defun drive-answer (prompt collection &rest _)
  (push prompt drive-asked)
  (let ((choices (if (functionp collection) (funcall collection "" nil t)
                   (mapcar (lambda (c) (if (consp c) (car c) c)) collection))))
    (cond ((string-match-p "what should I ask" prompt) "What does this do?")
          ((string-match-p "Pick an action" prompt) "Ask Tether about this")
          ((member "Allow once" choices) "Allow once")
          (t (error "unexpected question: %s" prompt)))))
(advice-add 'completing-read :override #'drive-answer)
(advice-add 'y-or-n-p :override (lambda (prompt) (push prompt drive-asked) t))

(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (push (cons (format "%s" method) params) drive-seen)))

(defun drive-count (method)
  (cl-count-if (lambda (n) (equal (car n) method)) drive-seen))

(defun drive-wait-messages (count)
  "Wait until the server sent COUNT window/showMessage in all."
  (let ((deadline (+ (float-time) 60)))
    (while (and (< (drive-count "window/showMessage") count) (< (float-time) deadline))
      (accept-process-output nil 0.05))))

(defun drive-plist-to-alist (value)
  "PARAMS plists as JSON-able alists."
  (cond ((and (consp value) (keywordp (car value)))
         (cl-loop for (k v) on value by #'cddr
                  collect (cons (substring (symbol-name k) 1) (drive-plist-to-alist v))))
        ((vectorp value) (vconcat (mapcar #'drive-plist-to-alist value)))
        (t value)))

(let* ((source (find-file-noselect (expand-file-name "src/app.py" drive-workspace)))
       (readme (find-file-noselect (expand-file-name "README.md" drive-workspace)))
       results)
  (with-current-buffer source
    (python-mode)
    (apply #'eglot (eglot--guess-contact))  ; M-x eglot (`eglot-ensure' waits for a command)
    (let ((server (eglot-current-server)))
      (push (cons "capabilities" (drive-plist-to-alist (eglot--capabilities server))) results)
      ;; 1. a code action on the selected function, as from M-x eglot-code-actions
      (let ((last-nonmenu-event 13))  ; invoked from the keyboard, not a mouse menu
        (eglot-code-actions (point-min) (point-max) nil t))
      (drive-wait-messages 1)
      ;; 2. M-x tether-ask (the README's command): a prompt typed by the user
      (let ((started (tether-ask "edit the readme")))
        (push (cons "started" (drive-plist-to-alist started)) results))
      (drive-wait-messages 2)
      ;; the edit came as workspace/applyEdit: the README buffer has it, unsaved
      (push (cons "readme-buffer" (with-current-buffer readme (buffer-string))) results)
      (push (cons "readme-modified" (if (buffer-modified-p readme) t :json-false)) results)
      (push (cons "asked" (vconcat (reverse drive-asked))) results)
      (push (cons "seen" (vconcat (mapcar (lambda (n) (vector (car n) (drive-plist-to-alist (cdr n))))
                                          (reverse drive-seen))))
            results)
      (eglot-shutdown server)))
  (with-temp-file drive-out
    (insert (json-encode results))))

(kill-emacs 0)
