"""The Docker sandbox: building bot images from untrusted folders and running each bot in its own
locked-down container. Modules are named by what they hold (engine client, images, containers,
socket folders, reaper/events, build contexts, requirements, Dockerfile policy)."""
