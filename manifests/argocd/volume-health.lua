-- Argo CD health check for cadre.dev/Volume (docs/design.md 1.2, 4).
-- Bound is Healthy, Failed (the claim was lost or cannot be made) is
-- Degraded, Pending is Progressing; the message is the Ready condition's.
-- Written for Lua 5.1 (gopher-lua).
local hs = {}

local function condition(kind)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == kind then
      return c
    end
  end
  return nil
end

if obj.status == nil or obj.status.phase == nil or obj.status.phase == "" then
  hs.status = "Progressing"
  hs.message = "waiting for the cadre controller to look at the Volume"
  return hs
end

local generation = obj.metadata and obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and observed ~= nil and observed < generation then
  hs.status = "Progressing"
  hs.message = "waiting for the cadre controller to observe generation " .. generation
  return hs
end

local phase = obj.status.phase
local ready = condition("Ready")
local message = (ready and ready.message ~= "" and ready.message) or phase

if phase == "Bound" then
  hs.status = "Healthy"
elseif phase == "Failed" then
  hs.status = "Degraded"
else
  hs.status = "Progressing"
  if ready ~= nil and ready.reason ~= nil and ready.reason ~= "" then
    message = ready.reason .. ": " .. message
  end
end
hs.message = message
return hs
