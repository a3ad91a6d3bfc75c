-- The smallest Neovim set-up for the plugin's tests: the plugin on 'runtimepath',
-- nothing from the user's configuration (started with --clean).
local plugin = assert(os.getenv("TETHER_NVIM_PLUGIN"), "TETHER_NVIM_PLUGIN is not set")
vim.opt.runtimepath:prepend(plugin)
vim.o.swapfile = false
vim.o.more = false
vim.o.shortmess = vim.o.shortmess .. "IF"
vim.cmd("runtime plugin/tether.lua")
